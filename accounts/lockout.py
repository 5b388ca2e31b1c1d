"""The answers to a paused sign-in and to a client that keeps sending bad access tokens; the limits of
password resets and sign-ups.

django-axes decides when sign-in is paused (settings: AXES_*); `sign_in_paused` is how a person is told
(AXES_LOCKOUT_CALLABLE): how long it lasts, nothing about whether the account exists. Bearer tokens
have no username to count, so failed token checks are counted per client address here, in the cache
(Redis when REDIS_URL is set, so every app server counts the same).
"""

from __future__ import annotations

import math

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.clients import client_address

TOKEN_FAILURE_LIMIT = 20  # failed token checks per client address …
TOKEN_FAILURE_WINDOW = 15 * 60  # … within this many seconds
RESET_LIMIT = 5  # password-reset requests per client address, and per e-mail address …
RESET_WINDOW = 60 * 60  # … within this many seconds
SIGN_UP_WINDOW = 60 * 60  # sign-ups per client address (SIGN_UPS_PER_HOUR) within this many seconds


def sign_in_paused(request: HttpRequest, credentials: dict | None = None, *args, **kwargs) -> HttpResponse:
    minutes = math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    response = render(
        request,
        "registration/sign_in_paused.html",
        {"pause_minutes": minutes},
        status=settings.AXES_HTTP_RESPONSE_CODE,
    )
    response["Retry-After"] = str(minutes * 60)
    return response


def _client(request: HttpRequest) -> str:
    return client_address(request)


def _paused(key: str, limit: int, window: int) -> int | None:
    return window if (cache.get(key) or 0) >= limit else None


def _note(key: str, window: int) -> None:
    if cache.add(key, 1, window):
        return
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, window)


def token_pause(request: HttpRequest) -> int | None:
    """Seconds to wait before this client may try a token again, or None when it may now."""
    return _paused(f"token-failures:{_client(request)}", TOKEN_FAILURE_LIMIT, TOKEN_FAILURE_WINDOW)


def note_token_failure(request: HttpRequest) -> None:
    _note(f"token-failures:{_client(request)}", TOKEN_FAILURE_WINDOW)


def reset_pause(request: HttpRequest, email: str) -> int | None:
    """Password-reset requests are limited like sign-ins: per client address and per address asked for."""
    keys = (f"reset:ip:{_client(request)}", f"reset:email:{email.strip().lower()}")
    waits = [_paused(key, RESET_LIMIT, RESET_WINDOW) for key in keys]
    return max((wait for wait in waits if wait), default=None)


def note_reset(request: HttpRequest, email: str) -> None:
    for key in (f"reset:ip:{_client(request)}", f"reset:email:{email.strip().lower()}"):
        _note(key, RESET_WINDOW)


def sign_up_pause(request: HttpRequest) -> int | None:
    """Seconds before this client may send the sign-up form again, or None when it may now: each try
    counts (`SIGN_UPS_PER_HOUR` per client address), so sign-up is no oracle of which usernames and
    addresses have accounts, and no way to make accounts in bulk."""
    return _paused(f"sign-up:{_client(request)}", settings.SIGN_UPS_PER_HOUR, SIGN_UP_WINDOW)


def note_sign_up(request: HttpRequest) -> None:
    _note(f"sign-up:{_client(request)}", SIGN_UP_WINDOW)
