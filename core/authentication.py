"""Session authentication that checks CSRF on every write, signed in or not.

DRF's SessionAuthentication only checks CSRF for signed-in users; anonymous visitors write to their
session too, so their writes need the same protection.

A request without the session cookie has no session, so nobody is signed in: its lazy `user` (the
session and its person, Django's AuthenticationMiddleware) is not set up just to find that out, as the
API's anonymous reads (most of its traffic) would otherwise do on every call.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.authentication import CSRFCheck, SessionAuthentication
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from .exceptions import CsrfFailedError


class CsrfSessionAuthentication(SessionAuthentication):
    def authenticate(self, request: Request):
        if request.method not in SAFE_METHODS:
            self.enforce_csrf(request)
        if settings.SESSION_COOKIE_NAME not in request._request.COOKIES:
            return None
        user = getattr(request._request, "user", None)
        if not user or not user.is_active:
            return None
        return (user, None)

    def enforce_csrf(self, request: Request) -> None:
        def dummy_get_response(request):  # pragma: no cover - never called
            return None

        check = CSRFCheck(dummy_get_response)
        check.process_request(request)
        # No view callback here, as in DRF's own check: Django only reads its `csrf_exempt` attribute.
        reason = check.process_view(request, None, (), {})  # type: ignore[arg-type]
        if reason:
            raise CsrfFailedError(f"CSRF Failed: {reason}")
