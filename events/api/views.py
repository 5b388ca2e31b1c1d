"""REST API views (layer 4): parse input with its one serializer, call one use case, shape the body."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from events import selectors, services
from events.choices import Mode
from events.visitors import Visitor, client_mode, visitor_from_request

from . import schema
from .inputs import validated_input
from .scopes import REGISTRATIONS_WRITE, SAVED_WRITE
from .serializers import (
    CancelOutput,
    EventDetailsOutput,
    EventRefInput,
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
from .throttling import WRITES, WriteRateThrottle


def _mode(request: Request) -> Mode:
    return client_mode(request, default=Mode.API)


def _read_context(visitor: Visitor) -> dict[str, int]:
    """A read's body carries the visitor's stateVersion as it is now."""
    return {"state_version": selectors.state_version(visitor=visitor)}


def _event_id(request: Request, event_id: str) -> str:
    """The path's event id, validated by the same serializer the tools' `event_id` comes from.

    These endpoints take nothing else: any query or body parameter is refused as unknown.
    """
    validated_input(NoInput, request.query_params)
    if request.method not in ("GET", "HEAD"):
        validated_input(NoInput, request.data)
    return validated_input(EventRefInput, {"event_id": event_id})["event_id"]


class EventSearchApi(APIView):
    @schema.operation(
        "search_events",
        parameters=[EventSearchPageInput],
        responses=schema.responses(SearchOutput, 400, 429, 503),
        summary="Search published upcoming events",
    )
    def get(self, request: Request) -> Response:
        params = validated_input(EventSearchPageInput, request.query_params)
        visitor = visitor_from_request(request)
        result = selectors.search_events(visitor=visitor, mode=_mode(request), **params)
        return Response(SearchOutput(result, context=_read_context(visitor)).data)


class EventDetailApi(APIView):
    @schema.operation(
        "get_event_details",
        parameters=[schema.EVENT_ID],
        responses=schema.responses(EventDetailsOutput, 400, 404, 503),
        summary="Everything public about one event, with the visitor's saved and registered state",
    )
    def get(self, request: Request, event_id: str) -> Response:
        visitor = visitor_from_request(request)
        details = selectors.get_event_details(
            visitor=visitor, mode=_mode(request), event_id=_event_id(request, event_id)
        )
        return Response(EventDetailsOutput(details, context=_read_context(visitor)).data)


class SavedEventApi(APIView):
    throttle_classes = [WriteRateThrottle]
    throttle_scope = WRITES
    write_scope = SAVED_WRITE

    @schema.operation(
        "save_event",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(SaveOutput, 400, 403, 404, 409, 429, 503, success=(200, 201)),
        summary="Save an event (idempotent: a second save says alreadySaved)",
    )
    def put(self, request: Request, event_id: str) -> Response:
        event_id = _event_id(request, event_id)
        visitor = visitor_from_request(request, create_token=True)
        result = services.save_event(visitor=visitor, mode=_mode(request), event_id=event_id)
        return Response(SaveOutput(result).data, status=200 if result.already_saved else 201)

    @schema.operation(
        "unsave_event",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(UnsaveOutput, 400, 403, 404, 429, 503),
        summary="Remove a saved event (removing what is not saved changes nothing)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        visitor = visitor_from_request(request)
        result = services.unsave_event(
            visitor=visitor, mode=_mode(request), event_id=_event_id(request, event_id)
        )
        return Response(UnsaveOutput(result).data)


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
    throttle_classes = [WriteRateThrottle]
    throttle_scope = WRITES
    write_scope = REGISTRATIONS_WRITE

    @schema.operation(
        "register_event",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(RegistrationOutput, 400, 401, 403, 404, 409, 429, 503, success=(200, 201)),
        summary="Register the signed-in visitor (idempotent: a second call says alreadyRegistered)",
    )
    def post(self, request: Request, event_id: str) -> Response:
        result = services.register_event(
            visitor=visitor_from_request(request), mode=_mode(request), event_id=_event_id(request, event_id)
        )
        return Response(RegistrationOutput(result).data, status=201 if result.created else 200)

    @schema.operation(
        "cancel_registration",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(CancelOutput, 400, 401, 403, 404, 409, 429, 503),
        summary="Cancel the signed-in visitor's registration (a second call says alreadyCancelled)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        result = services.cancel_registration(
            visitor=visitor_from_request(request), mode=_mode(request), event_id=_event_id(request, event_id)
        )
        return Response(CancelOutput(result).data)


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
    throttle_classes = [WriteRateThrottle]
    throttle_scope = WRITES
    write_scope = REGISTRATIONS_WRITE

    @schema.operation(
        "join_waitlist",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(WaitlistOutput, 400, 401, 403, 404, 409, 429, 503, success=(200, 201)),
        summary="Join a full event's waiting list (idempotent: a second call says alreadyWaiting)",
    )
    def post(self, request: Request, event_id: str) -> Response:
        result = services.join_waitlist(
            visitor=visitor_from_request(request), mode=_mode(request), event_id=_event_id(request, event_id)
        )
        return Response(WaitlistOutput(result).data, status=200 if result.already_waiting else 201)

    @schema.operation(
        "leave_waitlist",
        parameters=[schema.EVENT_ID],
        request=None,
        responses=schema.responses(LeaveWaitlistOutput, 400, 401, 403, 404, 429, 503),
        summary="Leave the waiting list, declining any seat held (leaving when not waiting changes nothing)",
    )
    def delete(self, request: Request, event_id: str) -> Response:
        result = services.leave_waitlist(
            visitor=visitor_from_request(request), mode=_mode(request), event_id=_event_id(request, event_id)
        )
        return Response(LeaveWaitlistOutput(result).data)


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
