"""OpenAPI documentation of the error envelope, of the codes each endpoint can answer with, and of how
each operation may be called (its `security`).

Success bodies are described by the output serializers that build them (`events/contract.py`). Who may
call is read from where the rule lives, never listed per operation here: an action's row
(`events.actions`: the scope a token needs) and `events.scopes` (which rights a visitor holds without an
account), or for a plain read the view's `TokenScope` and the action that fills the list it reads.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.authentication import SessionScheme
from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from core.idempotency import HEADER as IDEMPOTENCY_HEADER
from core.idempotency import REPLAYED as REPLAYED_HEADER
from events.actions import ACTIONS
from events.models import PUBLIC_ID_PATTERN

from ..scopes import WITHOUT_ACCOUNT, TokenScope

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


#: The plain reads of a visitor's own list (not actions), each with the action that fills the list.
LISTS: dict[str, str] = {}


def operation[F: Callable[..., Any]](
    use_case: str, *, lists: str | None = None, **documented: Any
) -> Callable[[F], F]:
    """A view method's OpenAPI operation, whose id is the name of the action (or read) it runs.

    `lists` names, for a plain read of the visitor's own list, the action that fills it: the list is
    there without an account exactly when that action is (the saved list is; registrations are not).
    """
    if lists is not None:
        if lists not in ACTIONS:
            raise ValueError(f"{use_case} lists what {lists} fills, which is no action")
        LISTS[use_case] = lists
    return extend_schema(operation_id=use_case, **documented)


@dataclass(frozen=True)
class Access:
    """How one operation may be called: the scope a personal access token needs (None: no token may),
    and whether a visitor without an account may call it (with their session, or none yet)."""

    token_scope: str | None
    without_account: bool


def access(auto_schema: AutoSchema) -> Access:
    """The access of the operation `auto_schema` documents. An action's comes from its row; a plain read
    (the visitor's own lists, the export) needs what the view's `TokenScope` asks of a token, and is
    open without an account only when it `lists` what an action open without one fills. Anything else
    (a read of a person's own data) needs the person."""
    operation_id = auto_schema.get_operation_id()
    row = ACTIONS.get(operation_id)
    if row is not None:
        return Access(token_scope=row.scope, without_account=row.scope in WITHOUT_ACCOUNT)
    needed = [
        permission.needed(auto_schema.method)
        for permission in auto_schema.view.get_permissions()
        if isinstance(permission, TokenScope)
    ]
    filled_by = ACTIONS.get(LISTS.get(operation_id, ""))
    return Access(
        token_scope=(needed[0] or None) if needed else None,
        without_account=filled_by is not None and filled_by.scope in WITHOUT_ACCOUNT,
    )


def responses(success_serializer, *error_codes: int, success: tuple[int, ...] = (200,)) -> dict:
    """The success body and the envelopes an operation answers with; every operation may also answer
    401 (an unknown, expired or revoked access token), 403 (a token without the scope), 429 (too many
    bad tokens from one client) and 500."""
    documented = {code: success_serializer for code in success}
    for code in sorted({*error_codes, 401, 403, 429, 500}):
        documented[code] = OpenApiResponse(ErrorEnvelope, description=ERROR_DESCRIPTIONS[code])
    return documented


class Body(serializers.Serializer):
    """What `body` makes: an input's fields but the path's event, under the names the API takes them by
    (the input's own, renamed by `source=` where the use case's differ)."""

    #: Keys of which a call gives exactly one (the input's own check, said in the document too).
    exactly_one: tuple[str, ...] = ()


def body(
    input_class: type[serializers.Serializer],
    component: str,
    description: str = "",
    *,
    exactly_one: tuple[str, ...] = (),
    path: tuple[str, ...] = ("event_id",),
) -> type[Body]:
    """The document's view of an input's fields besides the path's (the event, and any other `path`
    names), for a request body or query parameters. The fields are the input's own (copied), so the
    document cannot drift from what is validated."""
    fields = input_class().fields
    declared: dict[str, Any] = {
        name: copy.deepcopy(field) for name, field in fields.items() if name not in path
    }
    if not set(exactly_one) <= set(declared):
        raise ValueError(f"{component}: exactly one of {exactly_one}, not all of them are its keys")
    declared.update(__doc__=description, exactly_one=exactly_one)
    return type(component, (Body,), declared)


class BodySchema(OpenApiSerializerExtension):
    """A body's schema as drf-spectacular maps it, plus what it does not read off the fields: no key
    but the declared ones (the API refuses any other, UNKNOWN_PARAMETER), and the keys of which
    exactly one is given. Without them a generated client (or schemathesis) sends bodies the document
    allows and the API refuses."""

    target_class = "events.api.schema.Body"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        mapped = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        mapped["additionalProperties"] = False
        if self.target.exactly_one:
            mapped["oneOf"] = [{"required": [name]} for name in self.target.exactly_one]
        return mapped


def require_bodies(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook (SPECTACULAR_SETTINGS): drf-spectacular marks a request body required only
    when one of its keys is; a body of which one of several keys must be given (`exactly_one`) must be
    sent all the same, or a client may send none and be refused."""
    schemas = result.get("components", {}).get("schemas", {})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            request_body: dict[str, Any] = operation.get("requestBody") or {}
            for media in request_body.get("content", {}).values():
                component = schemas.get(media.get("schema", {}).get("$ref", "").rpartition("/")[2], {})
                if component.get("oneOf") and all(choice.get("required") for choice in component["oneOf"]):
                    request_body["required"] = True
    return result


#: The methods whose operations honour an Idempotency-Key (core/idempotency.py).
WRITE_METHODS = ("post", "put", "patch", "delete")
IDEMPOTENCY_KEY = {
    "in": "header",
    "name": IDEMPOTENCY_HEADER,
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
    "description": (
        "Makes a retry safe: a fresh random key (a UUID) per request, sent again with a retry of the "
        "same request. The same key with the same request answers the first answer again (status, "
        f"body and headers, with `{REPLAYED_HEADER}: true`) and does nothing again; with another "
        "request (body, path or method) 422 IDEMPOTENCY_KEY_REUSED; while the first request still "
        "runs 409 IDEMPOTENCY_KEY_IN_USE (retry later). Keys are the caller's own and kept "
        f"{settings.IDEMPOTENCY_KEY_HOURS:g} hours. A refusal is kept like a success; an outage, an "
        "unexpected error or the write rate is not, so the same request may run again."
    ),
}
IDEMPOTENCY_ANSWERS = {
    "400": "INVALID_INPUT / IDEMPOTENCY_KEY_INVALID (not 1 to 255 visible ASCII characters)",
    "409": "TEMPORARY_FAILURE / IDEMPOTENCY_KEY_IN_USE (the first request with this key still runs)",
    "422": "INVALID_INPUT / IDEMPOTENCY_KEY_REUSED (this key was sent with another request)",
}


def document_idempotency(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    """A postprocessing hook (SPECTACULAR_SETTINGS): every write operation takes an `Idempotency-Key`
    header, may answer its refusals, and says when a success is a replay. Every REST write honours
    it (core.idempotency.IdempotentWrites, checked by a test), so it is said here once for all."""
    envelope = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
    replayed = {
        "description": "true when this answer is the first answer to the same key, replayed.",
        "schema": {"type": "string", "enum": ["true"]},
    }
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in WRITE_METHODS:
                continue
            operation.setdefault("parameters", []).append(copy.deepcopy(IDEMPOTENCY_KEY))
            answers = operation.setdefault("responses", {})
            for status, said in IDEMPOTENCY_ANSWERS.items():
                if status in answers:
                    answers[status]["description"] = f"{answers[status]['description']}; {said}"
                else:
                    answers[status] = {"content": copy.deepcopy(envelope), "description": said}
            for status, answer in answers.items():
                if status.startswith("2"):
                    answer.setdefault("headers", {})[REPLAYED_HEADER] = copy.deepcopy(replayed)
            operation["responses"] = dict(sorted(answers.items()))
    return result


#: What DRF's CharField refuses in any input that a document's string can hold: NUL (its other refusal,
#: a lone surrogate, is no Unicode scalar value, so no schema string or UTF-8 body carries one).
_REFUSED = r"\u0000"


@functools.cache
def _spaces() -> str:
    """A regex class body of the characters `str.strip` removes (DRF trims text input with it), as
    `\\uXXXX` escapes so that Python's and ECMAScript's regular expressions read it alike."""
    spaces = [code for code in range(sys.maxunicode + 1) if chr(code).isspace()]
    return "".join(f"\\u{code:04x}" for code in spaces)


class TextFieldSchema(OpenApiSerializerFieldExtension):
    """A text input as DRF validates it: no NUL, and when it may not be blank, at
    least one character that trimming leaves (" " is blank). Only what a caller sends is constrained;
    a field with a pattern of its own (an id) keeps it."""

    target_class = "rest_framework.fields.CharField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        field = self.target
        if direction != "request" or field.read_only or schema.get("type") != "string" or "pattern" in schema:
            return schema
        if any(isinstance(validator, RegexValidator) for validator in field.validators):
            return schema  # its own pattern (an identifier), which drf-spectacular adds after this
        if field.allow_blank:  # drf-spectacular adds the blank as a second choice (`oneOf`)
            schema["pattern"] = f"^[^{_REFUSED}]+$"
            return schema
        kept = f"[^{_spaces() if field.trim_whitespace else ''}{_REFUSED}]"
        schema.update(minLength=1, pattern=f"^[^{_REFUSED}]*{kept}[^{_REFUSED}]*$")
        return schema


class CsrfSessionScheme(SessionScheme):
    """Documents our CSRF-checking session authentication as cookie auth. Every operation accepts the
    session. It is also what serves a visitor with no session yet (their first save makes one), so
    where a visitor without an account may call, it adds the empty requirement `{}`: no credential."""

    target_class = "core.authentication.CsrfSessionAuthentication"

    def get_security_definition(self, auto_schema):
        return {
            **super().get_security_definition(auto_schema),
            "description": (
                "The browser's session (signed in, or a visitor's own). Every write also needs the CSRF "
                f"token: the {settings.CSRF_COOKIE_NAME} cookie's value in X-CSRFToken, signed in or not."
            ),
        }

    def get_security_requirement(self, auto_schema):
        session: dict[str, list[str]] = {self.name: []}
        return [session, {}] if access(auto_schema).without_account else session


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Documents personal access tokens (`Authorization: Bearer are_…`, made on My events), with the
    scope each operation needs (OpenAPI 3.1 lets an http scheme's requirement name roles)."""

    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = "accessToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A personal access token (are_…). Its scopes limit what it may do: each operation's "
                "security names the one it needs. An OAuth token is for /mcp only and is refused here."
            ),
        }

    def get_security_requirement(self, auto_schema):
        scope = access(auto_schema).token_scope
        return {self.name: [scope]} if scope is not None else None
