"""The one exception handler: every error on /api becomes the envelope, with the right HTTP status.

Domain errors carry their own code; DRF and Django errors are translated here once. Anything
unexpected is logged and answered with a 500 envelope, never an HTML page. Refusals are recorded as
Activity rows by `events.actions.perform`, never here.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response

from . import errors
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


class UnsupportedMediaType(errors.InvalidInput):
    reason = "UNSUPPORTED_MEDIA_TYPE"
    http_status = 415
    default_message = "Send the body as application/json."


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
        return errors.answer_for(
            errors.InvalidToken
        )()  # only the bearer token authentication fails a request
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
        return errors.answer_for(errors.NotFound)("Not found.")
    if isinstance(exc, exceptions.PermissionDenied | DjangoPermissionDenied):
        return errors.answer_for(errors.PermissionDenied)()
    if isinstance(exc, DatabaseError | InterfaceError):  # a closed connection is no DatabaseError
        logger.exception("Database failure while serving an API request")
        return errors.answer_for(errors.TemporaryFailure)()
    logger.exception("Unexpected error while serving an API request", exc_info=exc)
    return InternalError()


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    error = to_domain_error(exc)
    # When the database could not be reached the version cannot be read either, and trying would only
    # wait on it a second time: the envelope says null. Otherwise it is the visitor's current value
    # (or null if reading it fails).
    unreachable = isinstance(exc, OperationalError | InterfaceError)
    version = None if unreachable else current_state_version(context.get("request"))
    body = error_envelope(error, state_version=version)
    return Response(body, status=error.http_status, headers=error_headers(error))
