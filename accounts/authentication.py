"""`Authorization: Bearer are_…` for the REST API: the token's person, with the token as `request.auth`.

A request with a token needs no CSRF token (no cookie is involved); a request without one falls through
to session authentication, which still checks CSRF on every write.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.request import Request

from .lockout import note_token_failure, token_pause
from .tokens import authenticate_token


def bearer(header: bytes | str) -> str | None:
    """The token of an `Authorization: Bearer …` header, or None when the header is not one."""
    text = header.decode("latin-1") if isinstance(header, bytes) else header
    kind, _, value = text.partition(" ")
    return value.strip() if kind.lower() == "bearer" else None


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request: Request):
        raw = bearer(get_authorization_header(request))
        if raw is None:
            return None
        wait = token_pause(request._request)
        if wait is not None:  # too many bad tokens from this client: no more guessing for a while
            raise Throttled(wait)
        token = authenticate_token(raw)
        if token is None:
            note_token_failure(request._request)
            raise AuthenticationFailed("invalid_token")
        return (token.user, token)

    def authenticate_header(self, request: Request) -> str:
        return f'Bearer realm="{settings.SITE_NAME}"'
