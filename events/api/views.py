"""REST API views (layer 4): each operation performs its action's row (`events.actions`) and answers
its body or envelope; the reads of the visitor's own lists call their selector."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from django.http import QueryDict
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django_webmcp.registry import TOOL_HEADER
from django_webmcp.responses import tool_call
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from core import conditional
from core.conditional import Validators
from core.idempotency import IdempotentWrites
from core.inputs import nothing_but, validated_input
from core.revision import revision
from core.visitors import Mode, Visitor, claimed_mode, with_token
from events import selectors
from events.actions import ACTIONS, Caller, Performed, perform
from events.contract import (
    AnswersInput,
    CheckInApiInput,
    DecisionOutput,
    EventDetailsOutput,
    EventSearchPageInput,
    FindAttendeeInput,
    NoInput,
    PaymentReportApiInput,
    RefundApiInput,
    RegistrationInput,
    RegistrationListOutput,
    SavedListOutput,
    SearchOutput,
    StaffAnswersBodyInput,
    StaffAnswersInput,
    StaffAnswersOutput,
    WaitlistListOutput,
)

from . import schema

if TYPE_CHECKING:
    from rest_framework import request

    class Request(request.Request):
        """A DRF request over a Django one that went through `core.visitors.VisitorMiddleware`."""

        visitor: Visitor
else:
    from rest_framework.request import Request


def _read_context(visitor: Visitor) -> dict[str, int]:
    """A read's body carries the visitor's stateVersion as it is now."""
    return {"state_version": selectors.state_version(visitor=visitor)}


#: The headers `conditional.answer` (Django's get_conditional_response) may answer 304 or 412 from.
PRECONDITIONS = ("HTTP_IF_MATCH", "HTTP_IF_NONE_MATCH", "HTTP_IF_MODIFIED_SINCE", "HTTP_IF_UNMODIFIED_SINCE")


def _run(
    request: Request,
    name: str,
    event_id: str | None = None,
    *,
    takes: type[Serializer] | None = None,
    state_version: int | None = None,
) -> Response:
    """Perform the action `name` for the request and answer its body (the refusal is raised for the one
    exception handler). The path's event id is its input, and the query (and a write's body) must be
    empty, unless `takes` names the input whose other fields come from the query (a read) or the JSON
    body (a write), under the API's names: its fields', renamed by `source=` (`attendeeId`). Anything
    else there is refused (UNKNOWN_PARAMETER), never ignored. A search takes its conditions and page
    window from the query. A read's body says `state_version` when the caller has read it already."""
    return _answer(_perform(request, name, event_id, takes=takes), state_version=state_version)


def _perform(
    request: Request,
    name: str,
    event_id: str | None = None,
    *,
    takes: type[Serializer] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Performed:
    """`_run`'s call of the action, before its answer; `options` are the view's own for the use case."""
    action = ACTIONS[name]
    token = request.auth if hasattr(request.auth, "scopes") else None
    if action.anonymous_token and token is None:
        with_token(request)
    caller = Caller(
        visitor=request.visitor,
        # Fixed where the call enters: a WebMCP tool's call of this route is the agent's, else a program's.
        channel=Mode.AGENT if tool_call(request) else Mode.API,
        claimed=claimed_mode(request),
        scopes=frozenset(token.scopes) if token is not None else None,
        rate_request=request if action.writes else None,
    )
    if event_id is None:
        return perform(action, caller, request.query_params, input=EventSearchPageInput, options=options)
    path = {"event_id": event_id}
    reads = request.method in ("GET", "HEAD")
    if takes is None:
        others = [request.query_params] if reads else [request.query_params, lambda: request.data]
        return perform(action, caller, nothing_but(path, *others), options=options)

    def read() -> dict[str, Any]:
        # From the query of a read, the body of a write, read when `perform` reads its input (after the
        # token's scope and the write rate; a body that cannot be read is refused then, as every body
        # is: MALFORMED_REQUEST, no Activity row); the rest must be empty.
        given, rest = _taken(request.query_params if reads else request.data, _keys(takes))
        others = [rest] if reads else [request.query_params, rest]
        return nothing_but({**path, **given}, *others)()

    return perform(action, caller, read, input=takes, options=options)


def _answer(performed: Performed, *, state_version: int | None = None) -> Response:
    """The body of what `_perform` came to, or its refusal raised for the one exception handler."""
    if performed.error is not None:
        raise performed.error  # the one exception handler answers the envelope
    return Response(performed.body(state_version=state_version), status=performed.status)


@functools.cache
def _keys(takes: type[Serializer]) -> frozenset[str]:
    """The keys a call gives `takes` in its query or body: its fields but the path's event."""
    return frozenset(takes().fields) - {"event_id"}


def _conditional_read(
    request: Request,
    shown: Callable[[], tuple[Any, ...] | None],
    build: Callable[[int | None], Response],
) -> Any:
    """A read of the catalogue answered 304 while what it shows has not changed: `shown()` is what the
    catalogue or the event says now (`selectors.search_revision`, `event_revision`; None: no such
    event, answered by the action), read in one statement before the action. A 304 performs no action
    (no Activity row: the visitor already holds the answer).

    The answer is the same for every visitor without an account or saves who sends what this request
    sent, so a shared cache may keep it for PUBLIC_MAX_AGE (core/conditional.py); with a session's
    saves, an account or a bearer token it is the visitor's own (`isSaved`, `stateVersion`).

    A WebMCP tool call (`get_event_details` reads this API) is one call, one request and one Activity
    row: never answered 304, and kept by no cache. `build(state_version)` makes the answer, with the
    visitor's stateVersion when it was read for the ETag (one read)."""
    if tool_call(request):
        response = build(None)
        add_never_cache_headers(response)
        patch_vary_headers(response, (TOOL_HEADER,))
        return response
    now = shown()
    if now is None:
        return build(None)
    visitor = request.visitor
    version = selectors.state_version(visitor=visitor)
    parts = ["api", request.get_full_path(), now, visitor.key, version, revision()]
    shared = not visitor.key and "HTTP_AUTHORIZATION" not in request.META
    validators = Validators(etag=conditional.etag(request, parts))
    vary = ("Authorization", TOOL_HEADER)
    return conditional.answer(request, validators, lambda: build(version), shared=shared, vary=vary)


def _taken(source: Any, keys: frozenset[str]) -> tuple[dict[str, Any], Any]:
    """What `source` (a query or a parsed body) gives under `keys`, and what is left of it for the
    check that nothing else was sent. A key given twice in a query stays in what is left (and is
    refused as repeated); a body that is not an object is left whole (and refused)."""
    if not isinstance(source, Mapping):
        return {}, source
    if isinstance(source, QueryDict):  # a query: one value per key, or the key is refused as repeated
        query = source.copy()
        given: dict[str, Any] = {}
        for key in keys:
            values = query.getlist(key)
            if len(values) == 1:
                given[key] = values[0]
                del query[key]
        return given, query
    return {key: value for key, value in source.items() if key in keys}, {
        key: value for key, value in source.items() if key not in keys
    }


class EventSearchApi(APIView):
    permission_classes: list[type] = []  # the action checks the token's scope

    @schema.operation(
        "search_events",
        parameters=[EventSearchPageInput],
        responses=schema.responses(SearchOutput, 400, 429, 503),
        summary="Search published upcoming events",
    )
    def get(self, request: Request) -> Response:
        if tool_call(request) or any(header in request.META for header in PRECONDITIONS):
            # What the request holds is checked before anything is built: a 304 performs no action.
            search = selectors.search_revision  # what its answer shows: no seats
            return _conditional_read(
                request, search, lambda version: _run(request, "search_events", state_version=version)
            )
        # Nothing to check: the revision for the ETag comes with the page, in its one statement.
        performed = _perform(request, "search_events", options={"with_revision": True})
        if performed.error is not None:
            return _answer(performed)  # raises it
        shown = performed.result.revision or selectors.search_revision()  # an empty page has no row
        return _conditional_read(
            request, lambda: shown, lambda version: _answer(performed, state_version=version)
        )


class EventDetailApi(APIView):
    permission_classes: list[type] = []

    @schema.operation(
        "get_event_details",
        parameters=[schema.EVENT_ID],
        responses=schema.responses(EventDetailsOutput, 400, 404, 503),
        summary="Everything public about one event, with the visitor's saved and registered state",
    )
    def get(self, request: Request, event_id: str) -> Response:
        return _conditional_read(
            request,
            lambda: selectors.event_revision(event_id=event_id),
            lambda version: _run(request, "get_event_details", event_id, state_version=version),
        )


class SavedListApi(APIView):
    @schema.operation(
        "list_saved",
        lists="save_event",
        responses=schema.responses(SavedListOutput, 400, 503),
        summary="The visitor's saved events (account or session)",
    )
    def get(self, request: Request) -> Response:
        validated_input(NoInput, request.query_params)
        visitor = request.visitor
        events = selectors.list_saved(visitor=visitor)
        return Response(SavedListOutput(events, context=_read_context(visitor)).data)


class RegistrationListApi(APIView):
    @schema.operation(
        "list_registrations",
        lists="register_event",
        responses=schema.responses(RegistrationListOutput, 400, 401, 503),
        summary="The signed-in visitor's registrations, newest first",
    )
    def get(self, request: Request) -> Response:
        validated_input(NoInput, request.query_params)
        visitor = request.visitor
        registrations = selectors.list_registrations(visitor=visitor)
        return Response(RegistrationListOutput(registrations, context=_read_context(visitor)).data)


class WaitlistListApi(APIView):
    @schema.operation(
        "list_waitlist",
        lists="join_waitlist",
        responses=schema.responses(WaitlistListOutput, 400, 401, 503),
        summary="The signed-in visitor's waiting lists, with positions and held seats (offers first)",
    )
    def get(self, request: Request) -> Response:
        validated_input(NoInput, request.query_params)
        visitor = request.visitor
        places = selectors.list_waitlist(visitor=visitor)
        return Response(WaitlistListOutput(places, context=_read_context(visitor)).data)


# ── Actions on their routes ────────────────────────────────────────────────────────────────────
# Each route's class bases on IdempotentWrites: every write honours an Idempotency-Key
# (core/idempotency.py; a test walks the API's routes for a writing view that does not).


def documented(
    name: str,
    errors: tuple[int, ...],
    summary: str,
    *,
    success: tuple[int, ...] = (200,),
    request: Any = None,
    parameters: tuple[Any, ...] = (),
    description: str | None = None,
) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    """The OpenAPI operation of a method that performs the action row `name` on an event's route: the
    row gives the operation's id and its answer's serializer; this adds what the document says for
    programs: the refusals the call can answer with, its summary, and what it takes besides the
    path's event (the `request` body or query `parameters`)."""
    row = ACTIONS[name]  # an unknown name fails here, at import
    return schema.operation(
        row.name,
        parameters=[schema.EVENT_ID, *parameters],
        request=request,
        responses=schema.responses(row.output, *errors, success=success),
        summary=summary,
        **({"description": description} if description else {}),
    )


class SavedEventApi(IdempotentWrites):
    # `me/saved/<event_id>`: a visitor's saved event (with their session, or a token).
    # (A comment, not a docstring: drf-spectacular would make that every operation's description.)

    # The action checks the token's scope, the use case who may act (TokenScope is for plain reads).
    permission_classes: list[type] = []

    @documented(
        "save_event",
        (400, 403, 404, 409, 429, 503),
        "Save an event (idempotent: a second save says alreadySaved)",
        success=(200, 201),
    )
    def put(self, request: Request, event_id: str) -> Response:
        return _run(request, "save_event", event_id)

    @documented(
        "unsave_event",
        (400, 403, 404, 429, 503),
        "Remove a saved event (removing what is not saved changes nothing)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        return _run(request, "unsave_event", event_id)


class RegistrationApi(IdempotentWrites):
    # `events/<event_id>/registration`: the signed-in visitor's registration.

    permission_classes: list[type] = []

    @documented(
        "register_event",
        (400, 401, 403, 404, 409, 429, 503),
        "Register the signed-in visitor (idempotent: a second call says alreadyRegistered)",
        success=(200, 201),
        request=schema.body(
            RegistrationInput,
            "RegistrationBody",
            "The person's answers to the event's questions (GET /api/events/{event_id} lists them and "
            "gives `answersSchema`), the ticket type (`ticket_type`, needed when the event sells several: "
            "`ticketTypes`) and, for a paid type, `payment_method` (bank_transfer, or at_door where "
            "offered); no body for a free event of one type without questions.",
        ),
        description=(
            "Answers are checked against the event's questions: a refusal is 400 ANSWERS_INVALID with "
            "`fields` keyed `answers.<identifier>`, each with its `code` (missing, invalid, too_long, "
            "not_an_option, must_accept, unknown, …), and nothing is written. An event that requires "
            "approval answers `pendingApproval: true`: the seat is held until its managers decide. A paid "
            "ticket type paid by transfer answers `status: pending_payment` with `payment` (reference, "
            "amount, dueAt, instructions, url): the seat is held until `dueAt`, and the person pays "
            "themselves. Paying at the door confirms at once, the amount due there."
        ),
    )
    def post(self, request: Request, event_id: str) -> Response:
        return _run(request, "register_event", event_id, takes=RegistrationInput)

    @documented(
        "cancel_registration",
        (400, 401, 403, 404, 409, 429, 503),
        "Cancel the signed-in visitor's registration (a second call says alreadyCancelled)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        return _run(request, "cancel_registration", event_id)


class RegistrationAnswersApi(IdempotentWrites):
    # `events/<event_id>/registration/answers`: the signed-in visitor's answers to the event's questions.

    permission_classes: list[type] = []

    @documented(
        "update_registration_answers",
        (400, 401, 403, 404, 409, 429, 503),
        "Replace the signed-in visitor's answers (until the event starts or changes close)",
        request=schema.body(AnswersInput, "AnswersBody", "All the person's answers, as at registration."),
    )
    def put(self, request: Request, event_id: str) -> Response:
        return _run(request, "update_registration_answers", event_id, takes=AnswersInput)


class WaitlistApi(IdempotentWrites):
    # `events/<event_id>/waitlist`: the signed-in visitor's place on a full event's waiting list.

    permission_classes: list[type] = []

    @documented(
        "join_waitlist",
        (400, 401, 403, 404, 409, 429, 503),
        "Join a full event's waiting list (idempotent: a second call says alreadyWaiting)",
        success=(200, 201),
    )
    def post(self, request: Request, event_id: str) -> Response:
        return _run(request, "join_waitlist", event_id)

    @documented(
        "leave_waitlist",
        (400, 401, 403, 404, 429, 503),
        "Leave the waiting list, declining any seat held (leaving when not waiting changes nothing)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        return _run(request, "leave_waitlist", event_id)


class CheckInApi(IdempotentWrites):
    # `events/<event_id>/check-ins`, the door for scanner apps: a scan checks its ticket's holder in;
    # the list says who is in.

    permission_classes: list[type] = []

    @documented(
        "check_in_attendee",
        (400, 401, 403, 404, 409, 429, 503),
        "Check a ticket's holder in (201 admitted; 200 alreadyCheckedIn, with the first check-in)",
        success=(200, 201),
        request=schema.body(
            CheckInApiInput,
            "CheckInBody",
            "A scan (`ticket`: the code as the scanner read it) or a choice (`attendeeId`, from "
            "the list of attendees): exactly one of them. No other key is accepted.",
            exactly_one=("ticket", "attendeeId"),
        ),
        description=(
            "For the event's door staff and managers (a personal access token needs "
            "checkin:write). Send exactly one of `ticket` (the scanned code) or `attendeeId` "
            "(from the list). The same `scanId` sent again is one scan: it answers as the first "
            "time. A `scannedAt` ahead of the server's clock is kept and flagged "
            "(`scanTimeInFuture`), never refused. The ticket code is never in an answer."
        ),
    )
    def post(self, request: Request, event_id: str) -> Response:
        return _run(request, "check_in_attendee", event_id, takes=CheckInApiInput)

    @documented(
        "find_attendee",
        (400, 401, 403, 404, 503),
        "The event's confirmed attendees with their check-ins, and the counts (door staff)",
        parameters=(schema.body(FindAttendeeInput, "FindAttendeeQuery"),),
        description=(
            "For the event's door staff and managers (a personal access token needs "
            "checkin:write). `query` matches part of a name or username, or a whole e-mail "
            "address; without it, the first attendees. `confirmed` and `checkedIn` count the "
            "whole event."
        ),
    )
    def get(self, request: Request, event_id: str) -> Response:
        return _run(request, "find_attendee", event_id, takes=FindAttendeeInput)


class PaymentReportApi(IdempotentWrites):
    # `events/<event_id>/registration/payment-report`: the signed-in person reports their transfer
    # (their session only: no token may, the account digits are theirs).

    permission_classes: list[type] = []

    @documented(
        "report_payment",
        (400, 401, 403, 404, 409, 429, 503),
        "Report the signed-in person's transfer (last five account digits and date): being checked",
        request=schema.body(
            PaymentReportApiInput,
            "PaymentReportBody",
            "`accountLast5`: the last five digits of the account paid from; `paidOn`: the transfer's date.",
        ),
        description=(
            "The person's own session only (a personal access token is refused: INSUFFICIENT_SCOPE). "
            "The digits are never answered back nor logged."
        ),
    )
    def post(self, request: Request, event_id: str) -> Response:
        return _run(request, "report_payment", event_id, takes=PaymentReportApiInput)


#: Every action a program calls on a route of its own, by route, with the route's name and its view:
#: the URLconf is made from this table (`urls.py`). The catalogue's reads above answer conditionally.
ACTION_ROUTES: dict[str, tuple[str, type[APIView]]] = {
    "me/saved/<str:event_id>": ("api-save-event", SavedEventApi),
    "events/<str:event_id>/registration": ("api-registration", RegistrationApi),
    "events/<str:event_id>/registration/answers": ("api-update-registration-answers", RegistrationAnswersApi),
    "events/<str:event_id>/waitlist": ("api-waitlist", WaitlistApi),
    "events/<str:event_id>/check-ins": ("api-check-ins", CheckInApi),
    "events/<str:event_id>/registration/payment-report": ("api-report-payment", PaymentReportApi),
}


# ── Approval: an event's managers decide on the registrations waiting for it ───────────────────

REGISTRATION_ID = OpenApiParameter(
    "registration_id",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.PATH,
    description="The registration's id.",
)


def _decide(
    request: Request, name: str, registration_id: int, *, takes: type[Serializer] | None = None
) -> Response:
    """A manager's action on the path's registration: `approve_registration`, `decline_registration`
    (nothing else in the request), `update_staff_answers` (`takes`: the rest of its input from the
    JSON body). A token needs the row's scope (`registrations:manage`)."""
    token = request.auth if hasattr(request.auth, "scopes") else None
    caller = Caller(
        visitor=request.visitor,
        channel=Mode.API,
        claimed=claimed_mode(request),
        scopes=frozenset(token.scopes) if token is not None else None,
        rate_request=request,
    )
    path = {"registration_id": registration_id}
    if takes is None:
        return _answer(
            perform(ACTIONS[name], caller, nothing_but(path, request.query_params, lambda: request.data))
        )

    def read() -> dict[str, Any]:
        given, rest = _taken(request.data, _keys(takes) - {"registration_id"})
        return nothing_but({**path, **given}, request.query_params, rest)()

    return _answer(perform(ACTIONS[name], caller, read, input=takes))


class ApproveRegistrationApi(IdempotentWrites):
    permission_classes: list[type] = []

    @schema.operation(
        "approve_registration",
        parameters=[REGISTRATION_ID],
        request=None,
        responses=schema.responses(DecisionOutput, 400, 401, 403, 404, 409, 429, 503),
        summary="Approve a registration waiting for approval (the event's managers, signed in)",
    )
    def post(self, request: Request, registration_id: int) -> Response:
        return _decide(request, "approve_registration", registration_id)


class DeclineRegistrationApi(IdempotentWrites):
    permission_classes: list[type] = []

    @schema.operation(
        "decline_registration",
        parameters=[REGISTRATION_ID],
        request=None,
        responses=schema.responses(DecisionOutput, 400, 401, 403, 404, 409, 429, 503),
        summary="Decline a registration waiting for approval; its seat goes to whoever waits first",
    )
    def post(self, request: Request, registration_id: int) -> Response:
        return _decide(request, "decline_registration", registration_id)


class StaffAnswersApi(IdempotentWrites):
    permission_classes: list[type] = []

    @schema.operation(
        "update_staff_answers",
        parameters=[REGISTRATION_ID],
        request=schema.body(
            StaffAnswersBodyInput, "StaffAnswersBody", "The organisers' answers to their own questions."
        ),
        responses=schema.responses(StaffAnswersOutput, 400, 401, 403, 404, 429, 503),
        summary="Fill in the organisers' own questions for a registration (the event's managers)",
    )
    def put(self, request: Request, registration_id: int) -> Response:
        return _decide(request, "update_staff_answers", registration_id, takes=StaffAnswersInput)


# ── Payments: an event's managers confirm them and record refunds ──────────────────────────────

ATTENDEE_ID = OpenApiParameter(
    "attendee_id",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.PATH,
    description="The registration's attendee id (find_attendee, the admin, the export).",
)


def _payment(
    request: Request, name: str, event_id: str, attendee_id: int, *, takes: type[Serializer] | None = None
) -> Response:
    """`confirm_payment` or `refund_payment` on the path's registration (a refund may say its amount)."""
    token = request.auth if hasattr(request.auth, "scopes") else None
    caller = Caller(
        visitor=request.visitor,
        channel=Mode.AGENT if tool_call(request) else Mode.API,
        claimed=claimed_mode(request),
        scopes=frozenset(token.scopes) if token is not None else None,
        rate_request=request,
    )
    path = {"event_id": event_id, "attendee_id": attendee_id}
    if takes is None:
        data = nothing_but(path, request.query_params, lambda: request.data)
        return _answer(perform(ACTIONS[name], caller, data))

    def read() -> dict[str, Any]:
        given, rest = _taken(request.data, _keys(takes) - {"attendee_id"})
        return nothing_but({**path, **given}, request.query_params, rest)()

    return _answer(perform(ACTIONS[name], caller, read, input=takes))


class ConfirmPaymentApi(IdempotentWrites):
    permission_classes: list[type] = []

    @documented(
        "confirm_payment",
        (400, 401, 403, 404, 409, 429, 503),
        "Confirm a registration's payment (the event's managers): confirmed, with its ticket e-mailed",
        parameters=(ATTENDEE_ID,),
        description=(
            "For the event's managers (a personal access token needs payments:write). A paid one "
            "answers `changed: false`; money for an expired one is accepted while a seat is free "
            "(`lateConfirmed`), else 409 PAYMENT_EXPIRED; a cancelled or free one is 409 "
            "PAYMENT_NOT_PENDING."
        ),
    )
    def post(self, request: Request, event_id: str, attendee_id: int) -> Response:
        return _payment(request, "confirm_payment", event_id, attendee_id)


class RefundPaymentApi(IdempotentWrites):
    permission_classes: list[type] = []

    @documented(
        "refund_payment",
        (400, 401, 403, 404, 409, 429, 503),
        "Record a refund (the event's managers, signed in): who, when, how much",
        parameters=(ATTENDEE_ID,),
        request=schema.body(
            RefundApiInput,
            "RefundBody",
            "`amount`: integer TWD, all that was paid if left out.",
            path=("event_id", "attendee_id"),
        ),
        description=(
            "The money moves outside the site; this records it, once. Only for a paid registration "
            "that no longer holds its seat, or whose event is cancelled (409 PAYMENT_NOT_REFUNDABLE)."
        ),
    )
    def post(self, request: Request, event_id: str, attendee_id: int) -> Response:
        return _payment(request, "refund_payment", event_id, attendee_id, takes=RefundApiInput)
