"""The one exception handler: every error on /api becomes the envelope, with the right HTTP status.

Domain errors carry their own code; DRF and Django errors are translated here once. Anything
unexpected is logged and answered with a 500 envelope, never an HTML page. A refusal that came before
the view's use case ran (the input, the token's scope) is recorded here as that use case's call.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response

from events import errors
from events.activity import record_refusal
from events.choices import Mode
from events.visitors import client_mode, visitor_from_request

from . import schema
from .envelope import current_state_version, error_envelope, error_headers
from .throttling import retry_after

logger = logging.getLogger(__name__)


class InternalError(errors.DomainError):
    """Unexpected failure; the message never leaks internals."""

    default_message = "An unexpected error occurred."


class MethodNotAllowed(errors.InvalidInput):
    reason = "METHOD_NOT_ALLOWED"
    http_status = 405
    default_message = "This method is not allowed here."


class MalformedRequest(errors.InvalidInput):
    reason = "MALFORMED_REQUEST"
    default_message = "The request body is not valid JSON."
    # The session's CSRF check reads the body: a body that cannot be read may fail before the caller
    # is known, and the row would name nobody.
    recorded_early = False


class UnsupportedMediaType(errors.InvalidInput):
    reason = "UNSUPPORTED_MEDIA_TYPE"
    http_status = 415
    default_message = "Send the body as application/json."
    recorded_early = False  # found while reading the body, as above


class NotAcceptable(errors.InvalidInput):
    reason = "NOT_ACCEPTABLE"
    http_status = 406
    default_message = "This endpoint answers with application/json only."


class CsrfFailedError(exceptions.PermissionDenied):
    """Raised by our session authentication when a write lacks a valid CSRF token."""

    default_code = "csrf_failed"


def to_domain_error(exc: Exception) -> errors.DomainError:
    """Translate any exception raised while serving an API request into a domain error."""
    if isinstance(exc, errors.DomainError):
        return exc
    if isinstance(exc, CsrfFailedError):
        return errors.CsrfFailed()
    if isinstance(exc, exceptions.ValidationError):
        return errors.InvalidInput(extra={"fields": exc.detail})
    if isinstance(exc, exceptions.AuthenticationFailed):
        return errors.InvalidToken()  # only the bearer token authentication fails a request
    if isinstance(exc, exceptions.NotAuthenticated):
        return errors.AuthRequired()
    if isinstance(exc, exceptions.Throttled):
        # djangorestframework-stubs omit `Throttled.wait` (seconds or None, set by its __init__).
        wait = retry_after(exc.wait)  # type: ignore[attr-defined]
        return errors.RateLimited(extra={"retryAfter": wait})
    if isinstance(exc, exceptions.MethodNotAllowed):
        return MethodNotAllowed()
    if isinstance(exc, exceptions.ParseError):
        return MalformedRequest()
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return UnsupportedMediaType()
    if isinstance(exc, exceptions.NotAcceptable):
        return NotAcceptable()
    if isinstance(exc, Http404 | exceptions.NotFound):
        return errors.EventNotFound("Not found.")
    if isinstance(exc, exceptions.PermissionDenied | DjangoPermissionDenied):
        return errors.PermissionDenied()
    if isinstance(exc, DatabaseError | InterfaceError):  # a closed connection is no DatabaseError
        logger.exception("Database failure while serving an API request")
        return errors.TemporaryFailure()
    logger.exception("Unexpected error while serving an API request", exc_info=exc)
    return InternalError()


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    error = to_domain_error(exc)
    # When the database could not be reached the version cannot be read either, and trying would only
    # wait on it a second time: the envelope says null. Otherwise it is the visitor's current value
    # (or null if reading it fails).
    unreachable = isinstance(exc, OperationalError | InterfaceError)
    if not unreachable:
        _record_refusal(error, context)
    version = None if unreachable else current_state_version(context.get("request"))
    body = error_envelope(error, state_version=version)
    return Response(body, status=error.http_status, headers=error_headers(error))


def _record_refusal(error: errors.DomainError, context: dict[str, Any]) -> None:
    """The view method's use case (`schema.operation`) is the action; the path's id its event."""
    request = context.get("request")
    if request is None or error.recorded or not error.recorded_early:
        return
    method = getattr(context.get("view"), (request.method or "").lower(), None)
    action = getattr(method, schema.ACTION_ATTRIBUTE, None)
    if action is None:
        return
    try:
        visitor = visitor_from_request(request)
    except exceptions.APIException:  # refused before authentication ran, which fails now
        return
    record_refusal(
        action=action,
        mode=client_mode(request, default=Mode.API),
        error=error,
        visitor=visitor,
        event_id=context.get("kwargs", {}).get("event_id"),
    )
