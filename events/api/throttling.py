"""Rate limits for writes. Rates are read from settings at each request so tests and deployments
can change them; counts live in the configured cache (Redis when REDIS_URL is set)."""

from django.conf import settings
from rest_framework.throttling import ScopedRateThrottle


class WriteRateThrottle(ScopedRateThrottle):
    def get_rate(self) -> str | None:
        if self.scope is None:
            return None
        return settings.WRITE_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().allow_request(request, view)
