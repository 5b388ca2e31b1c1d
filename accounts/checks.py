"""Sessions are read through a cache (`cached_db`): with several app server processes, that cache must
be one they share (Redis, `REDIS_URL`). In each process's own memory, a session signed out in one
process could still be read from another's memory until it expires. A deploy check
(`manage.py check --deploy`); development runs one process."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register

PROCESS_LOCAL = "django.core.cache.backends.locmem.LocMemCache"


@register(Tags.security, deploy=True)
def session_cache_is_shared(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    if not settings.SESSION_ENGINE.endswith(".cached_db"):
        return []
    if settings.CACHES[settings.SESSION_CACHE_ALIAS]["BACKEND"] != PROCESS_LOCAL:
        return []
    return [
        Warning(
            "Sessions are cached in each process's own memory.",
            hint="Set REDIS_URL, so every app server process reads the same sessions (a sign-out "
            "reaches them all).",
            id="accounts.W001",
        )
    ]
