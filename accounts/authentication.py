"""`Authorization: Bearer …` for the REST API: the token's person, with its `Credential` as
`request.auth` (accounts.credentials: one path for personal access tokens and OAuth tokens; an OAuth
token is bound to `/mcp`, so here it is refused like an unknown one).

A request with a token needs no CSRF token (no cookie is involved); a request without one falls through
to session authentication, which still checks CSRF on every write.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.request import Request

from .credentials import authenticate_bearer
from .lockout import note_token_failure, token_pause


def bearer(header: bytes | str) -> str | None:
    """The token of an `Authorization: Bearer …` header, or None when the header is not one."""
    text = header.decode("latin-1") if isinstance(header, bytes) else header
    kind, _, value = text.partition(" ")
    return value.strip() if kind.lower() == "bearer" else None


def api_resource() -> str:
    return f"{settings.SITE_URL.rstrip('/')}/api"


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request):
        raw = bearer(get_authorization_header(request))
        if raw is None:
            return None
        wait = token_pause(request._request)
        if wait is not None:  # too many bad tokens from this client: no more guessing for a while
            raise Throttled(wait)
        credential = authenticate_bearer(raw, resource=api_resource())
        if credential is None:
            note_token_failure(request._request)
            raise AuthenticationFailed("invalid_token")
        return (credential.user, credential)

    def authenticate_header(self, request: Request) -> str:
        return f'Bearer realm="{settings.SITE_NAME}"'
