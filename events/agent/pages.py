"""Tool calls on the page routes (layer 4): what a WebMCP tool call of a page does.

The route is shared with the person's page or form; the request is told apart once, at the route
(`webmcp.responses.tool_or_page`), by the tool header. A call performs its action row, with the write
rate and nothing in its body but what the tool takes, and one answer carries the region the person
sees (redrawn by `events.views`) and the result the agent gets (`webmcp.responses`); a refusal is the
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

from core.errors import InvalidInput
from core.visitors import Mode, client_mode, visitor_from_request
from webmcp.responses import MalformedToolInput, calling_page, tool_input, tool_refusal, with_tool_result

from .. import views
from ..actions import ACTIONS, Caller, Performed, perform
from ..forms import EventSearchForm

if TYPE_CHECKING:
    from ..views import HtmxHttpRequest as HttpRequest  # every page request went through django-htmx
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
def unsave_event(request: HttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "unsave_event")


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
    """The action once, within the write rate, with no input of its own (the route names the event);
    the row's message for the person, and the region of the page the call came from with the result."""
    action = ACTIONS[name]
    caller = Caller(
        visitor=visitor_from_request(request, create_token=action.anonymous_token),
        channel=client_mode(request, default=Mode.UI),
        rate_request=request,
    )
    body = [lambda: _tool_body(request)]
    performed = perform(action, caller, {"event_id": event_id}, nothing_else=body)
    if performed.error is not None:
        return _refusal(performed)
    views.tell(request, performed)
    origin = urlsplit(calling_page(request))
    response = views.redraw(request, performed.arguments["event_id"], origin, card=True)
    return with_tool_result(response, performed.body())


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
