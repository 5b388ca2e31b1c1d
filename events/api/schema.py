"""OpenAPI documentation of the error envelope and of the codes each endpoint can answer with.

Success bodies are described by the output serializers that build them (`serializers.py`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from drf_spectacular.authentication import SessionScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from events.models import PUBLIC_ID_PATTERN

EVENT_ID = OpenApiParameter(
    "event_id",
    {"type": "string", "pattern": PUBLIC_ID_PATTERN, "maxLength": 80},
    OpenApiParameter.PATH,
    description="Opaque event id, e.g. evt-webmcp-intro.",
)


class ErrorEnvelope(serializers.Serializer):
    ok = serializers.BooleanField(help_text="Always false.")
    code = serializers.ChoiceField(
        choices=[
            "INVALID_INPUT",
            "NOT_FOUND",
            "AUTH_REQUIRED",
            "PERMISSION_DENIED",
            "CONFLICT",
            "TEMPORARY_FAILURE",
            "INTERNAL_ERROR",
        ]
    )
    reason = serializers.CharField(help_text="Finer cause, e.g. EVENT_FULL, VALIDATION_ERROR, RATE_LIMITED.")
    message = serializers.CharField()
    nextAction = serializers.CharField(help_text="What a caller (or agent) should do next.")
    retryable = serializers.BooleanField(help_text="Only TEMPORARY_FAILURE is retryable.")
    uiUpdated = serializers.BooleanField()
    stateVersion = serializers.IntegerField(
        allow_null=True,
        help_text="The visitor's current stateVersion; null when it could not be read (database down).",
    )
    # A declared field named `fields`: DRF's metaclass takes it out of the class body, so the serializer's
    # own `fields` property is untouched; mypy cannot see the metaclass.
    fields = serializers.DictField(  # type: ignore[assignment]
        required=False, help_text="Per-field messages for VALIDATION_ERROR."
    )
    retryAfter = serializers.IntegerField(required=False, help_text="Seconds to wait (RATE_LIMITED).")


ERROR_DESCRIPTIONS = {
    400: "INVALID_INPUT (VALIDATION_ERROR with fields, UNKNOWN_PARAMETER, CURRENT_EVENT_MISMATCH)",
    401: "AUTH_REQUIRED (SIGN_IN_REQUIRED, INVALID_TOKEN)",
    403: "PERMISSION_DENIED (CSRF_FAILED, INSUFFICIENT_SCOPE; at the door NOT_EVENT_STAFF)",
    404: (
        "NOT_FOUND (EVENT_NOT_FOUND, REGISTRATION_NOT_FOUND; at the door TICKET_UNKNOWN, ATTENDEE_NOT_FOUND)"
    ),
    409: (
        "CONFLICT (EVENT_FULL, REGISTRATION_CLOSED, EVENT_CANCELLED; for the waiting list also "
        "ALREADY_REGISTERED, SEATS_AVAILABLE, WAITLIST_CLOSED; at the door TICKET_OTHER_EVENT, "
        "TICKET_CANCELLED)"
    ),
    429: "TEMPORARY_FAILURE / RATE_LIMITED with retryAfter (writes, or too many bad access tokens)",
    500: "INTERNAL_ERROR",
    503: "TEMPORARY_FAILURE / EVENT_SERVICE_UNAVAILABLE (retryable)",
}


def operation[F: Callable[..., Any]](use_case: str, **documented: Any) -> Callable[[F], F]:
    """A view method's OpenAPI operation, whose id is the name of the action (or read) it runs."""
    return extend_schema(operation_id=use_case, **documented)


def responses(success_serializer, *error_codes: int, success: tuple[int, ...] = (200,)) -> dict:
    """The success body and the envelopes an operation answers with; every operation may also answer
    401 (an unknown, expired or revoked access token), 403 (a token without the scope), 429 (too many
    bad tokens from one client) and 500."""
    documented = {code: success_serializer for code in success}
    for code in sorted({*error_codes, 401, 403, 429, 500}):
        documented[code] = OpenApiResponse(ErrorEnvelope, description=ERROR_DESCRIPTIONS[code])
    return documented


def body(
    input_class: type[serializers.Serializer],
    names: Mapping[str, str],
    component: str,
    description: str = "",
) -> type[serializers.Serializer]:
    """The document's view of an input's fields under the names the API takes them by (`names`: API
    name -> input field), for a request body or query parameters. The fields are the input's own
    (copied), so the document cannot drift from what is validated."""
    fields = input_class().fields
    declared: dict[str, Any] = {name: copy.deepcopy(fields[field]) for name, field in names.items()}
    declared["__doc__"] = description
    return type(component, (serializers.Serializer,), declared)


class CsrfSessionScheme(SessionScheme):
    """Documents our CSRF-checking session authentication as cookie auth."""

    target_class = "core.authentication.CsrfSessionAuthentication"


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Documents personal access tokens (`Authorization: Bearer are_…`, made on My events)."""

    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = "accessToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal access token (are_…); its scopes limit what it may do.",
        }
