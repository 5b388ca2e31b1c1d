"""Settings for the server the eval runner starts: the project's settings, made local and throwaway.

The runner sets EVALS_SQLITE_PATH to a file in a temporary directory, migrates it and loads the demo data,
so every run starts from the same catalogue. Whatever the caller's environment says (CI exports a
PostgreSQL DATABASE_URL, maybe REDIS_URL or SMTP settings), this server touches nothing shared: its own
database, its own in-process cache (so its rate-limit counts are its own), mail printed to its log,
plain-HTTP cookies on 127.0.0.1, and a quick password hash for its throw-away accounts. The runner's seat
steps (evals/seats.py) write the same SQLite file from another process, so it is opened as the project
opens SQLite: WAL, IMMEDIATE transactions, a 20 s wait.
"""

import os

from config.settings import *  # noqa: F403 (the project's settings, with the shared resources swapped)

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["EVALS_SQLITE_PATH"],
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
    }
}
# The default cache in this process only; the pages cache (PAGE_CACHE) as the project has it.
CACHES = {
    **CACHES,  # noqa: F405
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "KEY_PREFIX": "evals"},
}
MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend", "OPTIONS": {}}}
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False
SECURE_SSL_REDIRECT = False
# The runner signs up a fresh account for each signed-in case, in a file deleted after the run: the
# production hasher's 0.3 s per password (a cost meant for attackers) would only slow every such case.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Every signed-in case signs up from 127.0.0.1: the per-address sign-up limit is for visitors.
SIGN_UPS_PER_HOUR = 1000
