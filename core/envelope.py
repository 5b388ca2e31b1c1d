"""The error envelope (docs/agent-contract.md), built in one place for every interface.

Every envelope carries `stateVersion`: the visitor's current value when it can be read, `null` when it
cannot (the database is down, or reading it failed). Building an error never raises a second one.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string
from django_webmcp.oauth import bearer_challenge

from .errors import AuthRequired, DomainError, InsufficientScope, InvalidToken
from .visitors import Visitor, visitor_from_request

logger = logging.getLogger(__name__)


def error_envelope(error: DomainError, *, state_version: int | None = None) -> dict[str, Any]:
    """The envelope of `error`. `state_version=None` (the default) is sent as `"stateVersion": null`."""
    body: dict[str, Any] = {
        "ok": False,
        "code": error.code,
        "reason": error.reason,
        "message": error.message,
        "nextAction": error.next_action,
        "retryable": error.retryable,
        "uiUpdated": False,
    }
    body.update(error.extra)
    body["stateVersion"] = state_version
    return body


def error_headers(error: DomainError, *, resource_metadata: str = "") -> dict[str, str]:
    """HTTP headers that go with the envelope: `Retry-After` when the error says how long to wait, and
    a Bearer challenge (RFC 6750) when signing in or a better access token would help. On an OAuth
    protected resource (`/mcp`), `resource_metadata` is its RFC 9728 document: the challenge points an
    agent there to find where the person signs in, and names the scope the call needs."""
    headers: dict[str, str] = {}
    wait = error.extra.get("retryAfter")
    if wait is not None:
        headers["Retry-After"] = str(wait)
    scope = error.extra.get("scope", "")
    if isinstance(error, InvalidToken):
        kind, scope = "invalid_token", ""
    elif isinstance(error, InsufficientScope):
        kind = "insufficient_scope"
    elif isinstance(error, AuthRequired):
        kind = ""
    else:
        return headers
    headers["WWW-Authenticate"] = bearer_challenge(
        resource_metadata=resource_metadata, realm=settings.SITE_NAME, error=kind, scope=scope
    )
    return headers


def state_version_of(visitor: Visitor) -> int:
    """The visitor's stateVersion, read by the function `settings.STATE_VERSION_READER` names (the app
    that keeps the versions owns them; the envelope only carries them)."""
    reader = import_string(settings.STATE_VERSION_READER)
    return int(reader(visitor=visitor))


def current_state_version(request: Any) -> int | None:
    """The requesting visitor's stateVersion for an envelope, or None when it cannot be read.

    Takes a Django `HttpRequest` or a DRF `Request` (or None). Never raises: it is called while an
    error is being answered, and a failure to read the version must not turn into a second error. Do
    not call it when the database is already known to be down; pass `state_version=None` instead.
    """
    if request is None:
        return None
    try:
        visitor = getattr(request, "visitor", None)  # VisitorMiddleware's; else read from the request
        return state_version_of(visitor if visitor is not None else visitor_from_request(request))
    except Exception:
        logger.warning("stateVersion could not be read for an error envelope", exc_info=True)
        return None
