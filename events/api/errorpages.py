"""Django's 404/500 handlers: the envelope on /api and /health, the normal pages elsewhere."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from events import errors

from .envelope import error_envelope
from .exceptions import InternalError

JSON_PREFIXES = ("/api/", "/health")


def wants_envelope(request: HttpRequest) -> bool:
    return request.path.startswith(JSON_PREFIXES)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if wants_envelope(request):
        return JsonResponse(error_envelope(errors.EventNotFound("Not found.")), status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if wants_envelope(request):
        return JsonResponse(error_envelope(InternalError()), status=500)
    return defaults.server_error(request)
