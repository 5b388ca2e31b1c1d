"""Tool calls on the page routes (layer 4): what a WebMCP tool call of a page does.

The route is shared with the person's page or form; the request is told apart once, at the route
(`django_webmcp.responses.tool_or_page`), by the tool header. A call performs its action row with channel
`agent` (fixed here, whatever `X-Client-Mode` claims), within the write rate and with nothing in its
body but what the tool takes, and one answer carries the region the person sees (drawn by
`events.web.builders`) and the result the agent gets (`django_webmcp.responses`); a refusal is the JSON
envelope, the page left as it was. `write` serves every row with a page route a tool calls (the
route made from the row in `events/urls.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_webmcp.registry import registry
from django_webmcp.responses import (
    MalformedToolInput,
    calling_page,
    tool_input,
    tool_refusal,
    with_tool_result,
)
from rest_framework.serializers import Serializer

from core.errors import InvalidInput, UnknownParameter
from core.inputs import nothing_but
from core.visitors import Mode, claimed_mode, with_token

from ..actions import ACTIONS, Caller, Performed, perform
from ..forms import EventSearchForm
from ..web import builders

if TYPE_CHECKING:
    from ..web.builders import HtmxHttpRequest as HttpRequest  # every page request went through django-htmx
else:
    from django.http import HttpRequest


def tool_caller(request: HttpRequest, *, writes: bool) -> Caller:
    """An agent's tool call from a page: channel `agent`; a write keeps within the write rate."""
    return Caller(
        visitor=request.visitor,
        channel=Mode.AGENT,
        claimed=claimed_mode(request),
        rate_request=request if writes else None,
    )


@require_GET
def search_events(request: HttpRequest) -> HttpResponse:
    """`search_events` from the list: judged on its own input alone (an omitted condition is no
    condition, whatever the form or the URL held), shown in the form and the list it answers with."""
    first_page = {"limit": builders.PAGE_SIZE, "offset": 0, "with_seats": True}
    caller = tool_caller(request, writes=False)
    performed = perform(ACTIONS["search_events"], caller, lambda: _tool_body(request), options=first_page)
    if performed.error is not None:
        return _refusal(performed)
    conditions = EventSearchForm.conditions_from(performed.arguments)
    form = EventSearchForm(builders.querydict(conditions))
    form.is_valid()  # the same conditions the action took: the form shows them
    context = builders.list_context(request, request.visitor, form, performed)
    result = performed.body(state_version=context["webmcp_state"]["stateVersion"])
    url = reverse("event-list") + (f"?{builders.querydict(conditions).urlencode()}" if conditions else "")
    response = render(request, "events/event_list.html#search_answer", context)
    return with_tool_result(response, result, push_url=url)


@require_POST
def write(request: HttpRequest, event_id: str, action: str) -> HttpResponse:
    """A tool call of a row's page route (`Action.page`): the action once, within the write rate, with
    no input of its own (the route names the event); the row's message for the person, and the region
    of the page the call came from with the result. No confirmation page: the runtime sends a
    consequential call only after the person pressed the button."""
    row = ACTIONS[action]
    if row.anonymous_token:
        with_token(request)
    data: Any
    if set(row.input._declared_fields) - {"event_id"}:  # it takes more than the page's event (answers)
        data = lambda: _besides_the_event(request, event_id)  # noqa: E731 (read when perform checks it)
    else:
        data = nothing_but({"event_id": event_id}, lambda: _tool_body(request))  # the route names the event
    performed = perform(row, tool_caller(request, writes=True), data)
    if performed.error is not None:
        return _refusal(performed)
    builders.tell(request, performed)
    origin = urlsplit(calling_page(request))
    response = builders.redraw(request, performed.arguments["event_id"], origin, card=True)
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


# ── the door: the check-in page's tools (the event is the page's; `builders` draws its parts) ────


@require_POST
def find_attendee(request: HttpRequest, event_id: str) -> HttpResponse:
    """`find_attendee {query}`: the people found are listed on the page, each with the check-in button
    a `check_in_attendee` call waits for."""
    name = "find_attendee"
    caller = tool_caller(request, writes=False)
    performed = perform(ACTIONS[name], caller, lambda: _on_this_page(request, event_id), input=_input(name))
    if performed.error is not None:
        return _refusal(performed)
    query = performed.arguments.get("query", "")
    response = builders.live_part(request, event_id, performed.result, listed=True, query=query)
    return with_tool_result(response, performed.body())


@require_POST
def check_in_attendee(request: HttpRequest, event_id: str) -> HttpResponse:
    """`check_in_attendee {attendee_id}`, sent by the runtime only after the staff member pressed that
    attendee's button; never a ticket (the tool's input has none). The page shows the answer."""
    name = "check_in_attendee"
    caller = tool_caller(request, writes=True)
    performed = perform(ACTIONS[name], caller, lambda: _on_this_page(request, event_id), input=_input(name))
    if performed.error is not None:
        return _refusal(performed)
    response = builders.answer_part(request, event_id, builders.answer_of_check_in(performed))
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
