"""The site's base refusals (imports nothing of ours): the transport (input), sign-in, scopes, the
write rate and outages. The domain's own refusals subclass them in `events.errors`.

Each error names the refusal and carries the envelope fields of docs/agent-contract.md (code, reason,
HTTP status, whether a retry can help). One exception handler (`core.exceptions`) turns them into the
envelope for the API and the tool path, so no interface maps errors on its own.

They speak of no subject of the site. Where the site answers on its own (a 404 of a route, a 403, the
database away, a token missing or not valid), it answers with the project's subclass named in
`settings.ERROR_CLASSES` (`answer_for`), which says it in the site's words.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.conf import settings
from django.utils.functional import Promise
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _


class DomainError(Exception):
    code: ClassVar[str] = "INTERNAL_ERROR"
    reason: ClassVar[str] = "UNEXPECTED"
    http_status: ClassVar[int] = 500
    retryable: ClassVar[bool] = False
    default_message: ClassVar[str] = "Something went wrong."
    next_action: ClassVar[str] = "Stop and tell the person something went wrong."
    #: What a page tells the person (translated); `message` and `nextAction` are for programs and agents.
    person_message: ClassVar[str | Promise] = _("Sorry, that did not work. Please try again.")

    def __init__(self, message: str | None = None, *, extra: dict[str, Any] | None = None) -> None:
        self.message = message or self.default_message
        self.extra = extra or {}
        super().__init__(self.message)


class InvalidInput(DomainError):
    code = "INVALID_INPUT"
    reason = "VALIDATION_ERROR"
    http_status = 400
    default_message = "The input is not valid."
    next_action = "Fix the input and try again; do not guess values outside the schema."


class UnknownParameter(InvalidInput):
    reason = "UNKNOWN_PARAMETER"
    default_message = "The input contains parameters this operation does not accept."


class NotFound(DomainError):
    """Nothing public has this id (a route that does not exist answers the same, in the project's own
    words: `answer_for`)."""

    code = "NOT_FOUND"
    reason = "NOT_FOUND"
    http_status = 404
    default_message = "Nothing public has this id."
    next_action = "Do not guess other ids."


class AuthRequired(DomainError):
    code = "AUTH_REQUIRED"
    reason = "SIGN_IN_REQUIRED"
    person_message = _("Please sign in first; then you can do this.")
    http_status = 401
    default_message = "Sign in to do this."
    next_action = "Ask the person to sign in at /accounts/login/ and then try again."


class TokenRequired(AuthRequired):
    """A write over MCP without a token: there is no session to sign in to, only a token to bring."""

    default_message = (
        "This needs the person's account: connect with a personal access token (Authorization: Bearer …) "
        "that has the scope this tool needs."
    )
    next_action = (
        "Ask the person to sign in, make a personal access token with the scope this tool needs, and give "
        "it to you; then call again with it."
    )


class InvalidToken(AuthRequired):
    reason = "INVALID_TOKEN"
    default_message = "The access token is not valid: unknown, expired or revoked."
    next_action = "Stop and ask the person for a new access token."


class PermissionDenied(DomainError):
    code = "PERMISSION_DENIED"
    reason = "PERMISSION_DENIED"
    http_status = 403
    default_message = "This is not yours to do."
    next_action = "Stop."


class InsufficientScope(PermissionDenied):
    reason = "INSUFFICIENT_SCOPE"
    default_message = "The access token does not allow this."
    next_action = "Stop; the person may make a token with the scope this needs (extra.scope)."


class CsrfFailed(PermissionDenied):
    reason = "CSRF_FAILED"
    default_message = "The request is missing a valid CSRF token."
    next_action = "Stop; reload the page before trying again."


class TemporaryFailure(DomainError):
    code = "TEMPORARY_FAILURE"
    reason = "TEMPORARY_FAILURE"
    person_message = _("The site is temporarily unavailable. Please try again later.")
    http_status = 503
    retryable = True
    default_message = "The site is temporarily unavailable."
    next_action = "Retry later; do not report this as an empty result."


class RateLimited(TemporaryFailure):
    reason = "RATE_LIMITED"
    person_message = _("Too many requests. Please wait a moment and try again.")
    http_status = 429
    default_message = "Too many requests."
    next_action = "Wait retryAfter seconds, then retry."


class IdempotencyKeyInvalid(InvalidInput):
    reason = "IDEMPOTENCY_KEY_INVALID"
    default_message = "The Idempotency-Key header must be 1 to 255 visible ASCII characters."
    next_action = "Send a fresh random key (a UUID) of visible ASCII characters, or none."


class IdempotencyKeyReused(InvalidInput):
    """The key was first sent with another request (another body, path or method)."""

    reason = "IDEMPOTENCY_KEY_REUSED"
    http_status = 422
    default_message = "This Idempotency-Key was already used for a different request; nothing was done."
    next_action = "Use a new key for a new request; resend a request only with its own key and the same body."


class IdempotencyKeyInUse(TemporaryFailure):
    """The first request with this key is still running: its answer is not known yet."""

    reason = "IDEMPOTENCY_KEY_IN_USE"
    person_message = _("That is still being done. Please wait a moment and try again.")
    http_status = 409
    default_message = "A request with this Idempotency-Key is still running; nothing more was done."
    next_action = "Wait a moment, then send the same request with the same key again to get its answer."


def answer_for[E: DomainError](kind: type[E]) -> type[E]:
    """The project's own class for a refusal of `kind` that the site answers by itself (a route that
    does not exist, a 403 from Django or DRF, the database away, a token missing or not valid):
    `settings.ERROR_CLASSES` names it by `kind`'s name, in the project's words; else `kind`."""
    path = getattr(settings, "ERROR_CLASSES", {}).get(kind.__name__)
    if not path:
        return kind
    found = import_string(path)
    if not (isinstance(found, type) and issubclass(found, kind)):
        raise TypeError(f"ERROR_CLASSES[{kind.__name__!r}]: {path} is not a subclass of {kind.__name__}")
    return found
