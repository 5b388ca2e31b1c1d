"""A URLconf with API and plain views that fail on purpose, to prove the 500 and 503 envelopes."""

from django.db import OperationalError
from django.urls import include, path
from rest_framework.views import APIView

from config.urls import handler404, handler500  # noqa: F401  (Django reads them from this module)


class BrokenApi(APIView):
    def get(self, request):
        raise RuntimeError("boom: internal detail that must not leak")


class RaisingApi(APIView):
    """Raises `exception`; a test sets it (monkeypatch) to see what envelope the API answers with."""

    exception: Exception = RuntimeError("set by the test")

    def get(self, request):
        raise self.exception


def broken_plain(request):
    """A Django view (not DRF): its failure reaches Django's handler500."""
    raise RuntimeError("boom: internal detail that must not leak")


def database_down_plain(request):
    """A Django view (not DRF) whose database is unreachable: the middleware answers 503."""
    raise OperationalError("connection refused")


urlpatterns = [
    path("api/broken", BrokenApi.as_view()),
    path("api/raising", RaisingApi.as_view()),
    path("api/broken-plain", broken_plain),
    path("api/database-down-plain", database_down_plain),
    path("", include("config.urls")),
]
