"""Django's 404/500 handlers: the envelope on /api and /health, the normal pages elsewhere."""

from __future__ import annotations

import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseServerError, JsonResponse
from django.template import loader
from django.views import csrf, defaults
from django_webmcp.responses import tool_call

from . import errors
from .envelope import current_state_version, error_envelope
from .exceptions import InternalError

JSON_PREFIXES = ("/api/", "/health")


def wants_envelope(request: HttpRequest) -> bool:
    """The API, /health and every WebMCP tool call answer in the envelope, whatever the route."""
    return request.path.startswith(JSON_PREFIXES) or tool_call(request) is not None


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if wants_envelope(request):
        body = error_envelope(
            errors.answer_for(errors.NotFound)("Not found."), state_version=current_state_version(request)
        )
        return JsonResponse(body, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if wants_envelope(request):
        # Django calls this while handling the exception: after a failure to reach the database, do not
        # wait on it a second time for the version (null).
        unreachable = isinstance(sys.exception(), OperationalError | InterfaceError)
        version = None if unreachable else current_state_version(request)
        return JsonResponse(error_envelope(InternalError(), state_version=version), status=500)
    # As Django's own handler: no request context (no context processors to fail again), only the name.
    return HttpResponseServerError(loader.get_template("500.html").render({"site_name": settings.SITE_NAME}))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a tool call's write to a page route without a valid token gets the envelope
    (the API's own writes are refused by its authentication, with the same envelope)."""
    if wants_envelope(request):
        body = error_envelope(errors.CsrfFailed(), state_version=current_state_version(request))
        return JsonResponse(body, status=403)
    return csrf.csrf_failure(request, reason=reason)
