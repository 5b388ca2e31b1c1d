"""Rate limits for writes. Rates are read from settings at each request so tests and deployments
can change them; counts live in the configured cache (Redis when REDIS_URL is set)."""

import math

from django.conf import settings
from django.http import HttpRequest
from rest_framework.throttling import ScopedRateThrottle

from .clients import client_address
from .errors import RateLimited

#: The scope of every write, on the API (a view's `throttle_scope`) and through a tool call.
WRITES = "writes"


class WriteRateThrottle(ScopedRateThrottle):
    """The write rate: per person when signed in, else per client address (`core.clients`)."""

    def get_ident(self, request) -> str:
        return client_address(request)

    def get_rate(self) -> str | None:
        if self.scope is None:
            return None
        return settings.WRITE_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().allow_request(request, view)


def retry_after(wait: float | None) -> int:
    """Whole seconds to wait, as the envelope's `retryAfter` and the `Retry-After` header say it."""
    return math.ceil(wait) if wait is not None else 60


class _WriteScope:
    """What ScopedRateThrottle reads from a view: the scope to count against."""

    throttle_scope = WRITES


def check_write_rate(request: HttpRequest) -> None:
    """The API's write rate for a write that does not go through a DRF view (a tool call on a page
    route): the same counts, the same refusal."""
    throttle = WriteRateThrottle()
    if not throttle.allow_request(request, _WriteScope()):
        raise RateLimited(extra={"retryAfter": retry_after(throttle.wait())})
