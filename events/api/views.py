"""REST API views (layer 4): each operation performs its action's row (`events.actions`) and answers
its body or envelope; the reads of the visitor's own lists call their selector."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.inputs import validated_input
from core.visitors import Mode, Visitor, client_mode, visitor_from_request
from events import selectors
from events.actions import ACTIONS, Caller, perform
from events.contract import (
    CancelOutput,
    EventDetailsOutput,
    EventSearchPageInput,
    LeaveWaitlistOutput,
    NoInput,
    RegistrationListOutput,
    RegistrationOutput,
    SavedListOutput,
    SaveOutput,
    SearchOutput,
    UnsaveOutput,
    WaitlistListOutput,
    WaitlistOutput,
)

from . import schema


def _read_context(visitor: Visitor) -> dict[str, int]:
    """A read's body carries the visitor's stateVersion as it is now."""
    return {"state_version": selectors.state_version(visitor=visitor)}


def _run(request: Request, name: str, event_id: str | None = None) -> Response:
    """Perform the action `name` for the request: the path's event id is its input, and the query (and
    a write's body) must be empty; a search takes its conditions and page window from the query."""
    action = ACTIONS[name]
    token = request.auth if hasattr(request.auth, "scopes") else None
    caller = Caller(
        visitor=visitor_from_request(request, create_token=action.anonymous_token and token is None),
        channel=client_mode(request, default=Mode.API),
        scopes=frozenset(token.scopes) if token is not None else None,
        rate_request=request if action.writes else None,
    )
    if event_id is None:
        performed = perform(action, caller, request.query_params, input=EventSearchPageInput)
    else:
        parts: list[Any] = [request.query_params]
        if request.method not in ("GET", "HEAD"):
            parts.append(lambda: request.data)
        performed = perform(action, caller, {"event_id": event_id}, nothing_else=parts)
    if performed.error is not None:
        raise performed.error  # the one exception handler answers the envelope
    return Response(performed.body(), status=performed.status)


class EventSearchApi(APIView):
    permission_classes: list[type] = []  # the action checks the token's scope

    @schema.operation(
        "search_events",
        parameters=[EventSearchPageInput],
        responses=schema.responses(SearchOutput, 400, 429, 503),
        summary="Search published upcoming events",
    )
    def get(self, request: Request) -> Response:
        return _run(request, "search_events")


class EventDetailApi(APIView):
    permission_classes: list[type] = []

    @schema.operation(
        "get_event_details",
        parameters=[schema.EVENT_ID],
        responses=schema.responses(EventDetailsOutput, 400, 404, 503),
        summary="Everything public about one event, with the visitor's saved and registered state",
    )
    def get(self, request: Request, event_id: str) -> Response:
        return _run(request, "get_event_details", event_id)


class SavedEventApi(APIView):
    permission_classes: list[type] = []

    @schema.operation(
        "save_event",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(SaveOutput, 400, 403, 404, 409, 429, 503, success=(200, 201)),
        summary="Save an event (idempotent: a second save says alreadySaved)",
    )
    def put(self, request: Request, event_id: str) -> Response:
        return _run(request, "save_event", event_id)

    @schema.operation(
        "unsave_event",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(UnsaveOutput, 400, 403, 404, 429, 503),
        summary="Remove a saved event (removing what is not saved changes nothing)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        return _run(request, "unsave_event", event_id)


class SavedListApi(APIView):
    @schema.operation(
        "list_saved",
        responses=schema.responses(SavedListOutput, 400, 503),
        summary="The visitor's saved events (account or session)",
    )
    def get(self, request: Request) -> Response:
        validated_input(NoInput, request.query_params)
        visitor = visitor_from_request(request)
        events = selectors.list_saved(visitor=visitor)
        return Response(SavedListOutput(events, context=_read_context(visitor)).data)


class RegistrationApi(APIView):
    permission_classes: list[type] = []

    @schema.operation(
        "register_event",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(RegistrationOutput, 400, 401, 403, 404, 409, 429, 503, success=(200, 201)),
        summary="Register the signed-in visitor (idempotent: a second call says alreadyRegistered)",
    )
    def post(self, request: Request, event_id: str) -> Response:
        return _run(request, "register_event", event_id)

    @schema.operation(
        "cancel_registration",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(CancelOutput, 400, 401, 403, 404, 409, 429, 503),
        summary="Cancel the signed-in visitor's registration (a second call says alreadyCancelled)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        return _run(request, "cancel_registration", event_id)


class RegistrationListApi(APIView):
    @schema.operation(
        "list_registrations",
        responses=schema.responses(RegistrationListOutput, 400, 401, 503),
        summary="The signed-in visitor's registrations, newest first",
    )
    def get(self, request: Request) -> Response:
        validated_input(NoInput, request.query_params)
        visitor = visitor_from_request(request)
        registrations = selectors.list_registrations(visitor=visitor)
        return Response(RegistrationListOutput(registrations, context=_read_context(visitor)).data)


class WaitlistApi(APIView):
    permission_classes: list[type] = []

    @schema.operation(
        "join_waitlist",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(WaitlistOutput, 400, 401, 403, 404, 409, 429, 503, success=(200, 201)),
        summary="Join a full event's waiting list (idempotent: a second call says alreadyWaiting)",
    )
    def post(self, request: Request, event_id: str) -> Response:
        return _run(request, "join_waitlist", event_id)

    @schema.operation(
        "leave_waitlist",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(LeaveWaitlistOutput, 400, 401, 403, 404, 429, 503),
        summary="Leave the waiting list, declining any seat held (leaving when not waiting changes nothing)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        return _run(request, "leave_waitlist", event_id)


class WaitlistListApi(APIView):
    @schema.operation(
        "list_waitlist",
        responses=schema.responses(WaitlistListOutput, 400, 401, 503),
        summary="The signed-in visitor's waiting lists, with positions and held seats (offers first)",
    )
    def get(self, request: Request) -> Response:
        validated_input(NoInput, request.query_params)
        visitor = visitor_from_request(request)
        places = selectors.list_waitlist(visitor=visitor)
        return Response(WaitlistListOutput(places, context=_read_context(visitor)).data)
