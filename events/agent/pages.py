"""Tool calls on the page routes (layer 4): what a WebMCP tool call of a page does.

The route is shared with the person's page or form; the request is told apart once, at the route
(`webmcp.responses.tool_or_page`), by the tool header. A call performs its action row, with the write
rate and nothing in its body but what the tool takes, and one answer carries the region the person
sees (redrawn by `events.web.views`) and the result the agent gets (`webmcp.responses`); a refusal is the
JSON envelope, the page left as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from rest_framework.serializers import Serializer

from core.errors import InvalidInput, UnknownParameter
from core.visitors import Mode, client_mode, visitor_from_request
from webmcp.registry import registry
from webmcp.responses import MalformedToolInput, calling_page, tool_input, tool_refusal, with_tool_result

from ..actions import ACTIONS, Caller, Performed, perform
from ..forms import EventSearchForm
from ..web import door, views

if TYPE_CHECKING:
    from ..web.views import HtmxHttpRequest as HttpRequest  # every page request went through django-htmx
else:
    from django.http import HttpRequest


@require_GET
def search_events(request: HttpRequest) -> HttpResponse:
    """`search_events` from the list: judged on its own input alone (an omitted condition is no
    condition, whatever the form or the URL held), shown in the form and the list it answers with."""
    visitor = visitor_from_request(request)
    caller = Caller(visitor=visitor, channel=Mode.AGENT)
    first_page = {"limit": views.PAGE_SIZE, "offset": 0, "with_seats": True}
    performed = perform(ACTIONS["search_events"], caller, lambda: _tool_body(request), options=first_page)
    if performed.error is not None:
        return _refusal(performed)
    conditions = EventSearchForm.conditions_from(performed.arguments)
    form = EventSearchForm(views.querydict(conditions))
    form.is_valid()  # the same conditions the action took: the form shows them
    context = views.list_context(request, visitor, form, performed)
    result = performed.body(state_version=context["webmcp_state"]["stateVersion"])
    url = reverse("event-list") + (f"?{views.querydict(conditions).urlencode()}" if conditions else "")
    response = render(request, "events/event_list.html#search_answer", context)
    return with_tool_result(response, result, push_url=url)


@require_POST
def save_event(request: HttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "save_event")


@require_POST
def register_event(request: HttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "register_event")


@require_POST
def cancel_registration(request: HttpRequest, event_id: str) -> HttpResponse:
    """No confirmation page: the runtime sends the call only after the person pressed the cancel button."""
    return _write(request, event_id, "cancel_registration")


@require_POST
def join_waitlist(request: HttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "join_waitlist")


@require_POST
def leave_waitlist(request: HttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "leave_waitlist")


def _write(request: HttpRequest, event_id: str, name: str) -> HttpResponse:
    """The action once, within the write rate, on the route's event with what the call's body gives
    besides (register_event's answers; nothing for most); the row's message for the person, and the
    region of the page the call came from with the result."""
    action = ACTIONS[name]
    caller = Caller(
        visitor=visitor_from_request(request, create_token=action.anonymous_token),
        channel=client_mode(request, default=Mode.UI),
        rate_request=request,
    )
    if set(action.input._declared_fields) - {"event_id"}:  # it takes more than the page's event
        performed = perform(action, caller, lambda: _besides_the_event(request, event_id))
    else:
        performed = perform(
            action, caller, {"event_id": event_id}, nothing_else=[lambda: _tool_body(request)]
        )
    if performed.error is not None:
        return _refusal(performed)
    views.tell(request, performed)
    origin = urlsplit(calling_page(request))
    response = views.redraw(request, performed.arguments["event_id"], origin, card=True)
    return with_tool_result(response, performed.body())


def _besides_the_event(request: HttpRequest, event_id: str) -> dict[str, Any]:
    """A write's body with the route's event: what the tool takes besides it (register_event's
    answers). The event is the page's, so `event_id` in the body is a parameter the tool does not take."""
    body = dict(_tool_body(request))
    if "event_id" in body:
        raise UnknownParameter(
            "Unknown parameter(s): event_id.",
            extra={"fields": {"event_id": ["This parameter is not accepted."]}},
        )
    return {**body, "event_id": event_id}


def _tool_body(request: HttpRequest) -> Mapping[str, Any]:
    """A tool call's input as the page got it; malformed input is the caller's invalid input."""
    try:
        return tool_input(request)
    except MalformedToolInput as error:
        raise InvalidInput(str(error)) from error


def _refusal(performed: Performed) -> HttpResponse:
    """The envelope of a refused tool call (its Activity row was written by `perform`)."""
    assert performed.error is not None
    return tool_refusal(performed.body(), status=performed.status, headers=performed.headers)


# ── the door: the check-in page's tools (the event is the page's; `events.web.door` draws) ────


@require_POST
def find_attendee(request: HttpRequest, event_id: str) -> HttpResponse:
    """`find_attendee {query}`: the people found are listed on the page, each with the check-in button
    a `check_in_attendee` call waits for."""
    caller = Caller(visitor=visitor_from_request(request), channel=client_mode(request, default=Mode.AGENT))
    name = "find_attendee"
    performed = perform(ACTIONS[name], caller, lambda: _on_this_page(request, event_id), input=_input(name))
    if performed.error is not None:
        return _refusal(performed)
    query = performed.arguments.get("query", "")
    response = door.live_part(request, event_id, performed.result, listed=True, query=query)
    return with_tool_result(response, performed.body())


@require_POST
def check_in_attendee(request: HttpRequest, event_id: str) -> HttpResponse:
    """`check_in_attendee {attendee_id}`, sent by the runtime only after the staff member pressed that
    attendee's button; never a ticket (the tool's input has none). The page shows the answer."""
    caller = Caller(
        visitor=visitor_from_request(request),
        channel=client_mode(request, default=Mode.AGENT),
        rate_request=request,
    )
    name = "check_in_attendee"
    performed = perform(ACTIONS[name], caller, lambda: _on_this_page(request, event_id), input=_input(name))
    if performed.error is not None:
        return _refusal(performed)
    response = door.answer_part(request, event_id, door.answer_of_check_in(performed))
    return with_tool_result(response, performed.body())


def _input(name: str) -> type[Serializer] | None:
    """The tool's input, which may be narrower than its row's (check_in_attendee takes no ticket)."""
    declaration = registry.get(name)
    assert declaration is not None, f"{name} is no tool"
    return declaration.input_serializer


def _on_this_page(request: HttpRequest, event_id: str) -> dict[str, Any]:
    """The call's input with the page's event: the route names it, so the body may not name another."""
    body = dict(_tool_body(request))
    if "event_id" in body:
        raise InvalidInput(
            "event_id comes from the page's address; leave it out.",
            extra={"fields": {"event_id": ["This parameter is not accepted here."]}},
        )
    return {**body, "event_id": event_id}
