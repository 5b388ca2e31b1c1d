"""Which page routes take tool calls: `tool_or_page` splits a route into the person's view and the tool
call's (`events.agent.pages`) only where a declared WebMCP tool calls that route, so no tool-call view
is left that no tool reaches, and no tool's page route lacks one."""

from __future__ import annotations

import pytest
from django.urls import URLPattern
from django_webmcp.registry import registry
from django_webmcp.responses import tool_or_page

from events import urls
from events.models import Activity, SavedEvent
from events.web import views
from tests.factories import SavedEventFactory

pytestmark = pytest.mark.integration

_SPLIT = tool_or_page(views.home, views.home).__code__


def _split_routes() -> set[str]:
    """The URL names of the events routes told apart by `tool_or_page` (each with a tool-call view)."""
    return {
        pattern.name
        for pattern in urls.urlpatterns
        if isinstance(pattern, URLPattern) and getattr(pattern.callback, "__code__", None) is _SPLIT
    }


def test_a_route_takes_tool_calls_exactly_when_a_declared_tool_calls_it():
    names = {pattern.name for pattern in urls.urlpatterns if isinstance(pattern, URLPattern)}
    endpoints = {tool.endpoint for tool in registry.tools() if tool.endpoint in names}
    assert _split_routes() == endpoints


def test_unsave_is_no_tool_and_its_route_is_the_persons_alone():
    assert registry.get("unsave_event") is None
    assert "unsave-event" not in _split_routes()


@pytest.mark.django_db
def test_a_request_with_a_tool_header_on_the_unsave_route_gets_the_persons_answer(
    signed_in_en_client, user, event
):
    """What any route without a tool does with the header (as resend-ticket): the form's answer."""
    SavedEventFactory(user=user, event=event)
    headers = {"X-WebMCP-Tool": "unsave_event", "X-Client-Mode": "agent"}
    response = signed_in_en_client.post(f"/events/{event.public_id}/unsave/", headers=headers)
    assert response.status_code == 302 and response["Location"] == f"/events/{event.public_id}/"
    assert not SavedEvent.objects.filter(user=user, event=event).exists()
    rows = list(Activity.objects.values_list("action", "mode", "outcome", "claimed_mode"))
    assert rows == [("unsave_event", "ui", "OK", "agent")]  # a page's post; the header only a claim
