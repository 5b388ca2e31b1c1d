"""One settings module, driven by environment variables.

Development defaults (DEBUG on, SQLite file, a throwaway secret key) make `make run` work with no
configuration; production sets DEBUG=0, SECRET_KEY, ALLOWED_HOSTS and DATABASE_URL (see README).
"""

import logging
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.utils.csp import CSP
from django.utils.log import DEFAULT_LOGGING
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent

# The site's name, said once: pages, e-mails, the API document, the bearer challenge's realm.
SITE_NAME = "AgentReady Events"


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
MCP_ALLOWED_ORIGINS = env_list("MCP_ALLOWED_ORIGINS", "")  # browser origins besides the site's own (/mcp)

APP_VERSION = "0.1.0"
# Revision of the running code: set by the deployment, else read from git, else "unknown".
APP_REVISION = os.environ.get("APP_REVISION", "")

INSTALLED_APPS = [
    "config.apps.SiteAdminConfig",  # Django's admin; this and the three below: see config/apps.py
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "config.apps.TasksConfig",  # django_tasks_db
    "core",  # its one table: the REST writes' idempotency keys
    "ops",  # its management commands: backup, restore (ops/backups.py)
    "django_webmcp",
    "events",
    "config.apps.OAuthConfig",  # oauth2_provider; before accounts, whose admin takes its ID tokens out
    "accounts",
    "readiness",
    "config.apps.SignInLimitsConfig",  # axes
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.visitors.VisitorMiddleware",  # request.visitor, resolved on first use
    "core.middleware.PageMessageMiddleware",  # Django's, except for the envelope's paths (/api, /health)
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "core.middleware.DatabaseUnavailableMiddleware",
    "axes.middleware.AxesMiddleware",  # answers a paused sign-in with its page (last, as axes asks)
]

# Sign-in cannot be brute-forced (django-axes, attempts kept in the database so every app server
# counts the same): after AXES_FAILURE_LIMIT failed sign-ins for one account, or from one client
# address, sign-in is paused for SIGN_IN_PAUSE_MINUTES; a success resets the count. The admin lists
# the attempts (Axes › Access attempts); deleting one lifts its pause.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("SIGN_IN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("SIGN_IN_PAUSE_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.lockout.sign_in_paused"
AXES_HTTP_RESPONSE_CODE = 429
# Who the client is, for every limit kept per address (core/clients.py): behind this many proxies of
# our own (deploy/nginx.conf is one), the address the outermost of them saw; 0 reads REMOTE_ADDR alone
# and never X-Forwarded-For, which the client writes as it likes.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))
AXES_CLIENT_IP_CALLABLE = "core.clients.client_address"
# ipware's settings say the same, for anything of axes' that reads them rather than the callable.
AXES_IPWARE_PROXY_COUNT = TRUSTED_PROXY_COUNT or None
AXES_IPWARE_META_PRECEDENCE_ORDER = ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"][0 if TRUSTED_PROXY_COUNT else 1 :]
AXES_VERBOSE = False
# Sign-up tries per client address per hour (accounts.lockout.sign_up_pause).
SIGN_UPS_PER_HOUR = int(os.environ.get("SIGN_UPS_PER_HOUR", "10"))

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.site",
                "core.context_processors.brand",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")),
        # A kept connection is checked before a request reuses it: after a database restart the first
        # request on each worker is served, not answered 503 (`make faults`, bench/README.md).
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the task worker write the same file: WAL lets readers go on while one
    # writes, IMMEDIATE takes the write lock when a transaction begins (no upgrade deadlock), and a
    # writer waits up to 20 s for another. Tests use a file too, so a worker process can share it.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        **DATABASES["default"].get("OPTIONS", {}),
    }
    # One file per test run (its process id), so two runs on one machine never share a database.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "me"
LOGOUT_REDIRECT_URL = "event-list"

LANGUAGE_CODE = "zh-hant"
LANGUAGES = [("zh-hant", _("Traditional Chinese")), ("en", _("English"))]
# Ours first; then what the installed apps' own catalogues lack in zh-Hant (kept apart: makemessages
# would mark those msgids obsolete in ours, as none of our code uses them).
LOCALE_PATHS = [BASE_DIR / "locale", BASE_DIR / "locale" / "installed_apps"]
TIME_ZONE = "Asia/Taipei"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}


# Development prints mail to the console; production sends it over SMTP (EMAIL_* variables).
def smtp_options() -> dict[str, object]:
    options = {
        "host": os.environ.get("EMAIL_HOST"),
        "port": int(os.environ["EMAIL_PORT"]) if os.environ.get("EMAIL_PORT") else None,
        "username": os.environ.get("EMAIL_HOST_USER"),
        "password": os.environ.get("EMAIL_HOST_PASSWORD"),
        "use_tls": True if env_bool("EMAIL_USE_TLS", False) else None,
        "timeout": int(os.environ.get("EMAIL_TIMEOUT", "30")),  # below NOTIFICATION_SEND_LEASE
    }
    return {key: value for key, value in options.items() if value is not None}


EMAIL_BACKEND_PATH = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
MAILERS = {
    "default": {
        "BACKEND": EMAIL_BACKEND_PATH,
        "OPTIONS": smtp_options() if EMAIL_BACKEND_PATH.endswith("smtp.EmailBackend") else {},
    }
}
# Absolute links in e-mails (sent after commit, outside any request).
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", f"{SITE_NAME} <noreply@localhost>")


def env_seconds(name: str, default: str) -> list[int]:
    return [int(value) for value in env_list(name, default)]


# Background work (events/tasks.py): tasks live in the project's database; `manage.py db_worker` runs
# them. Every e-mail goes through the outbox (events/mail/outbox.py): retried after these delays (seconds;
# the default spans about 34 hours), an attempt older than the lease counted as dead.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
NOTIFICATION_RETRY_DELAYS = env_seconds(
    "NOTIFICATION_RETRY_DELAYS", "60,300,900,3600,10800,21600,43200,43200"
)
NOTIFICATION_SEND_LEASE = int(os.environ.get("NOTIFICATION_SEND_LEASE", "120"))

# The waiting list (events/services/): no seat is offered this close to the start; the sweep task
# ends expired offers this often (each offer also has its own task at its expiry).
WAITLIST_OFFERS_STOP_HOURS = float(os.environ.get("WAITLIST_OFFERS_STOP_HOURS", "2"))
WAITLIST_SWEEP_MINUTES = float(os.environ.get("WAITLIST_SWEEP_MINUTES", "5"))
# Reminders (events/tasks.py): a person is e-mailed this many hours before each event they are registered
# for (unless they turned reminders off); the worker looks for due reminders this often.
REMINDER_HOURS = float(os.environ.get("REMINDER_HOURS", "24"))
REMINDER_SWEEP_MINUTES = float(os.environ.get("REMINDER_SWEEP_MINUTES", "5"))
# The door (events/services/door.py): a check-in can be undone at the door this long after it.
CHECK_IN_UNDO_MINUTES = float(os.environ.get("CHECK_IN_UNDO_MINUTES", "5"))
# Paid registrations (events/services/payments.py, events/payment_methods.py): a transfer is due this
# many hours after registering (never after the event's last payment time), a reminder goes out this
# long before the deadline, and the worker expires the overdue ones this often. The methods offered,
# and the bank account people transfer to (shown to them with their reference).
PAYMENT_DEADLINE_HOURS = float(os.environ.get("PAYMENT_DEADLINE_HOURS", "72"))
PAYMENT_REMINDER_HOURS = float(os.environ.get("PAYMENT_REMINDER_HOURS", "24"))
PAYMENT_SWEEP_MINUTES = float(os.environ.get("PAYMENT_SWEEP_MINUTES", "5"))
PAYMENT_METHODS = env_list("PAYMENT_METHODS", "bank_transfer,at_door")
PAYMENT_BANK_NAME = os.environ.get("PAYMENT_BANK_NAME", "Example Bank (822)")
PAYMENT_BANK_BRANCH = os.environ.get("PAYMENT_BANK_BRANCH", "Taipei Main Branch")
PAYMENT_ACCOUNT_NAME = os.environ.get("PAYMENT_ACCOUNT_NAME", SITE_NAME)
PAYMENT_ACCOUNT_NUMBER = os.environ.get("PAYMENT_ACCOUNT_NUMBER", "0000-000-000000")
# Bank statements (events/bank_statements.py, docs/bank-statements.md): a larger uploaded file is refused
# whole (`too_large`) before it is read; the caller passes this as `read_statement(max_bytes=...)`.
BANK_IMPORT_MAX_BYTES = int(os.environ.get("BANK_IMPORT_MAX_BYTES", str(5 * 1024 * 1024)))

# Activity rows (events/activity.py) are written in batches by a thread of each process, not by the
# request: when this many are waiting, or the oldest has waited this long (seconds), and at a normal
# exit. 0 writes each row at once, in the request.
ACTIVITY_FLUSH_SECONDS = float(os.environ.get("ACTIVITY_FLUSH_SECONDS", "1"))
ACTIVITY_BATCH_ROWS = int(os.environ.get("ACTIVITY_BATCH_ROWS", "200"))

# The API search's statement is compiled once per shape (core/statements.py); STATEMENT_CACHE=0
# compiles each call through the ORM, as the bench's A/B does (bench/README.md). With VERIFY on (the
# tests turn it on), every call also compiles it through the ORM and fails unless both agree exactly.
STATEMENT_CACHE = os.environ.get("STATEMENT_CACHE", "1") != "0"
STATEMENT_CACHE_VERIFY = os.environ.get("STATEMENT_CACHE_VERIFY", "") == "1"

# Agents sign in (accounts/oauth/): the site is the OAuth 2.1 authorization server of its own MCP
# endpoint, on django-oauth-toolkit. The issuer is SITE_URL (https unless DEBUG, a system check says);
# every token is bound to the one resource it serves, `SITE_URL/mcp` (RFC 8707).
OAUTH_ISSUER = SITE_URL.rstrip("/")
MCP_RESOURCE = f"{OAUTH_ISSUER}/mcp"
# Redirect URI schemes a client may register besides https (and http on a loopback address): the
# desktop clients' own (Cursor, VS Code). javascript:, data: and the like never.
OAUTH_APP_SCHEMES = env_list("OAUTH_APP_SCHEMES", "cursor,vscode,vscode-insiders,windsurf")
# Dynamic registrations: at most this many per client address an hour; one never used is deleted
# after this many days (accounts/tasks.py).
OAUTH_REGISTRATION_RATE = os.environ.get("OAUTH_REGISTRATION_RATE", "20/hour")
OAUTH_UNUSED_CLIENT_DAYS = float(os.environ.get("OAUTH_UNUSED_CLIENT_DAYS", "30"))
# The toolkit warns that `http` redirect URIs are allowed: they are, on a loopback address only (a
# desktop client's own listener, RFC 8252 §7.3), which accounts/oauth/clients.py enforces for every
# client that registers itself or is described by a metadata document.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"  # named, so a migration can point at it
OAUTH2_PROVIDER = {
    "OIDC_ISS_ENDPOINT": OAUTH_ISSUER,
    "SCOPES_BACKEND_CLASS": "accounts.oauth.scopes.SiteScopes",
    "OAUTH2_VALIDATOR_CLASS": "accounts.oauth.validator.ResourceBoundValidator",
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "PKCE_REQUIRED": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http", *OAUTH_APP_SCHEMES],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("OAUTH_ACCESS_TOKEN_SECONDS", "3600")),
    "REFRESH_TOKEN_EXPIRE_SECONDS": int(os.environ.get("OAUTH_REFRESH_TOKEN_DAYS", "90")) * 86400,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REQUEST_APPROVAL_PROMPT": "force",
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "accounts.oauth.clients.ClientMetadataFetcher",
    "CIMD_MAX_DOCUMENT_SIZE": 8 * 1024,
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": MCP_RESOURCE,
    "OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS": [OAUTH_ISSUER],
    "OAUTH2_PROTECTED_RESOURCE_NAME": SITE_NAME,
}

# Sessions in the database, read through the default cache (below: Redis with REDIS_URL, else this
# process's memory), so a signed-in request reads no session row while it is cached.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
# The worker deletes expired sessions this often (accounts/tasks.py; Django's clearsessions, scheduled).
SESSION_SWEEP_HOURS = float(os.environ.get("SESSION_SWEEP_HOURS", "24"))
# How long personal data is kept before the worker removes or clears it (accounts/tasks.py, daily;
# accounts/privacy.py; shown on /privacy/): sign-in attempts (django-axes), the anonymous visitor's token
# on Activity rows (the row is kept), and a sent e-mail's address and last error (the row is kept).
RETENTION_SIGN_IN_ATTEMPTS_DAYS = int(os.environ.get("RETENTION_SIGN_IN_ATTEMPTS_DAYS", "30"))
RETENTION_VISITOR_TOKENS_DAYS = int(os.environ.get("RETENTION_VISITOR_TOKENS_DAYS", "90"))
RETENTION_NOTIFICATIONS_DAYS = int(os.environ.get("RETENTION_NOTIFICATIONS_DAYS", "180"))
RETENTION_ANSWERS_DAYS = int(os.environ.get("RETENTION_ANSWERS_DAYS", "365"))
RETENTION_PAYMENTS_DAYS = int(os.environ.get("RETENTION_PAYMENTS_DAYS", "180"))

REDIS_URL = os.environ.get("REDIS_URL", "")
# With REDIS_URL, cache entries (and so rate-limit counts) are shared by every app server process.
CACHES: dict[str, dict[str, Any]] = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
    | {"KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "agentready")}
}
# Drawn parts of pages (the list's region and event cards, events/templatetags/cards.py; the list
# template's `{% cache … using="pages" %}` names this alias), keyed by everything they show, so never
# out of date: in each process's own memory (a hit must cost less than drawing the
# part), apart from the default cache so they never push out the rate-limit counts.
PAGE_CACHE = "pages"
CACHES[PAGE_CACHE] = {
    "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    "LOCATION": "pages",
    "TIMEOUT": 3600,
    "OPTIONS": {"MAX_ENTRIES": int(os.environ.get("PAGE_CACHE_ENTRIES", "5000"))},
}
# How long a shared cache (a CDN, a proxy) may keep what is the same for every anonymous visitor: the
# API's reads of the catalogue (core/conditional.py). 0 keeps them out of shared caches.
PUBLIC_MAX_AGE = int(os.environ.get("PUBLIC_MAX_AGE", "30"))
# How long each process answers the list page and an event's page of visitors without an account from
# the revision as it last read it (events.selectors.kept_catalogue_revision, kept_event_revision): their
# 304s then read nothing from the database; a change reaches them that much later. Kept well under
# PUBLIC_MAX_AGE; 0 is off.
CATALOGUE_REVISION_SECONDS = float(os.environ.get("CATALOGUE_REVISION_SECONDS", "1"))

# Writes per client (user or IP) per minute, counted in the cache above.
WRITE_THROTTLE_RATES = {"writes": os.environ.get("WRITE_THROTTLE_RATE", "120/min")}
# How long a REST write's Idempotency-Key is kept (its answer replayed), then pruned (core/idempotency.py).
IDEMPOTENCY_KEY_HOURS = float(os.environ.get("IDEMPOTENCY_KEY_HOURS", "24"))

REST_FRAMEWORK = {
    # A bearer token (accounts.tokens) first: with one, no cookie and no CSRF; without, the session.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.BearerTokenAuthentication",
        "core.authentication.CsrfSessionAuthentication",
    ],
    "EXCEPTION_HANDLER": "core.exceptions.api_exception_handler",
    "DEFAULT_PERMISSION_CLASSES": ["events.scopes.TokenScope"],
    "DEFAULT_RENDERER_CLASSES": ["core.renderers.OrjsonRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Any throttle of DRF's own counts addresses as core/clients.py does (ours call it directly).
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
}

SPECTACULAR_SETTINGS = {
    # 3.1: a bearer scheme's requirement may name the scope an operation needs (3.0 allows none).
    "OAS_VERSION": "3.1.0",
    "TITLE": f"{SITE_NAME} API",
    "DESCRIPTION": "Search, read, save and register for events. Every error uses one envelope.",
    "VERSION": APP_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "events.api.schema.require_bodies",
        "events.api.schema.document_idempotency",
    ],
}

# The site's own words for the refusals it answers by itself (core.errors.answer_for): a route that
# does not exist, a 403, the database away, a token missing or not valid.
ERROR_CLASSES = {
    "NotFound": "events.errors.EventNotFound",
    "PermissionDenied": "events.errors.NotOrganiser",
    "TemporaryFailure": "events.errors.EventServiceUnavailable",
    "TokenRequired": "events.errors.EventsTokenRequired",
    "InvalidToken": "events.errors.EventsInvalidToken",
}
# The name the MCP server (/mcp) gives itself (serverInfo), which agents show; webmcp/ names no site.
WEBMCP_SERVER_NAME = "agentready-events"
WEBMCP_SERVER_VERSION = APP_VERSION
# The envelope reasons the WebMCP runtime produces on its own, in this project's vocabulary.
WEBMCP_REASONS = {"unavailable": "EVENT_SERVICE_UNAVAILABLE", "routeMismatch": "CURRENT_EVENT_MISMATCH"}

# Security. No inline script anywhere: the WebMCP manifest is data (json_script), the runtime a
# static module, htmx is configured not to inject styles or evaluate code (see base.html).
SECURE_CSP: dict[str, list[str]] = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_FAILURE_VIEW = "core.errorpages.csrf_failure"  # the envelope for WebMCP tool calls
# The function every envelope reads the visitor's stateVersion with (core.envelope): the events app
# keeps the versions.
STATE_VERSION_READER = "events.selectors.state_version"
CSRF_COOKIE_HTTPONLY = True  # pages hand the token to scripts in <meta name="csrf-token">
CSRF_COOKIE_SAMESITE = "Lax"
# Production behind TLS sets these (docs/deployment.md); off by default so http://127.0.0.1 works.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
if env_bool("BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")


class MaskSecretPaths(logging.Filter):
    """A path that carries a secret is masked in every log line that names it (the development
    server's request line, Django's "Not Found: <path>", any message with a path): a person's calendar
    address (`/calendar/<token>.ics`, events/web/feeds.py) shows as `/calendar/***.ics`, a reminder's
    unsubscribe link (`/accounts/reminders/unsubscribe/<signed token>/`) as
    `/accounts/reminders/unsubscribe/***/`. On the loggers that write paths, so the record itself is
    masked for every handler, and on the site's handlers, for every other logger. An access log outside
    Django (gunicorn's --access-logfile, a proxy's) must mask them too (README, deploy/nginx.conf)."""

    SECRETS_IN_PATHS = (
        (re.compile(r"(/calendar/)[^/\s?#\"']+(\.ics)"), r"\1***\2"),
        (re.compile(r"(/reminders/unsubscribe/)[^/\s?#\"']+"), r"\1***"),
    )

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the handler's to report, not this filter's
            return True
        masked = message
        for pattern, replacement in self.SECRETS_IN_PATHS:
            masked = pattern.sub(replacement, masked)
        if masked != message:
            record.msg, record.args = masked, ()
        return True


LOG_LEVEL = os.environ.get("LOG_LEVEL", "WARNING")
_MASKED = {"filters": ["mask_secret_paths"]}
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"mask_secret_paths": {"()": MaskSecretPaths}},
    "formatters": {"django.server": DEFAULT_LOGGING["formatters"]["django.server"]},
    "handlers": {
        "console": {"class": "logging.StreamHandler", **_MASKED},
        "django.server": {**DEFAULT_LOGGING["handlers"]["django.server"], **_MASKED},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's records go to the root's handler alone: its own console handler (DEBUG only)
        # printed each a second time, e.g. every "Bad Request" under `make run`. Its INFO records (the
        # reloader, the task worker) show in development as Django's default has it, else from LOG_LEVEL.
        "django": {"handlers": [], "level": "INFO" if DEBUG else LOG_LEVEL, "propagate": True},
        "django.request": {"propagate": True, **_MASKED},
        # Configuring "django" resets its children: the development server's request lines get
        # Django's own handler back, with their time.
        "django.server": {**DEFAULT_LOGGING["loggers"]["django.server"], **_MASKED},
    },
}
