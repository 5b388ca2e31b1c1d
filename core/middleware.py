"""When the database cannot be reached, answer 503 (retryable) instead of a 500.

API views already map database errors through the one exception handler; this covers the pages
(a friendly page) and anything else on /api or /health (the envelope).

Django's messages, for the pages only: an answer in the envelope never shows or keeps one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.contrib.messages.middleware import MessageMiddleware
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from .envelope import error_envelope
from .errorpages import JSON_PREFIXES, wants_envelope
from .errors import TemporaryFailure, answer_for

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.error("Database unavailable while serving %s", request.path, exc_info=exception)
        if wants_envelope(request):
            # The database is down, so the visitor's stateVersion cannot be read: null.
            response: HttpResponse = JsonResponse(
                error_envelope(answer_for(TemporaryFailure)(), state_version=None), status=503
            )
        else:
            # Without the request: no context processor (the user's) goes back to the database.
            page = render_to_string("503.html", {"site_name": settings.SITE_NAME})
            response = HttpResponse(page, status=503)
        response["Retry-After"] = "30"
        return response


class PageMessageMiddleware(MessageMiddleware):
    """Django's MessageMiddleware, except on /api and /health: nothing there adds or shows a message
    (the envelope has none), so those requests, the API's reads above all, set up no message storage
    (a cookie signer and the session's). Django's own `process_response` already passes over a
    request without storage."""

    def process_request(self, request: HttpRequest) -> None:
        if not request.path_info.startswith(JSON_PREFIXES):
            super().process_request(request)
