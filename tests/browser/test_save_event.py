"""WRITE: save_event twice through the tool; the page and the saved list follow exactly once."""

import pytest

from events.models import SavedEvent
from harness.tools import manifest, wait_for_tools

pytestmark = pytest.mark.browser


def test_save_event_twice_saves_once_and_the_page_shows_it(page, sign_in, make_user, orm):
    user = make_user()
    sign_in(user)
    page.goto("/events/evt-webmcp-intro/")
    wait_for_tools(page, {"get_event_details", "save_event", "register_event"})
    before = manifest(page)["stateVersion"]
    assert page.locator("#save-toggle").get_attribute("aria-pressed") == "false"

    first = page.webmcp.call_tool("save_event", {})
    assert first["ok"] is True and first["alreadySaved"] is False
    assert first["stateVersion"] == before + 1
    assert first["uiUpdated"] is True
    page.wait_for_function(
        "() => document.querySelector('#save-toggle').getAttribute('aria-pressed') === 'true'"
    )

    second = page.webmcp.call_tool("save_event", {})
    assert second["ok"] is True and second["alreadySaved"] is True
    assert second["stateVersion"] == first["stateVersion"]
    assert second["uiUpdated"] is True  # the page says it was already saved
    assert page.locator("#main .messages").inner_text().strip() != ""

    assert SavedEvent.objects.filter(user=user, event__public_id="evt-webmcp-intro").count() == 1
    saved = page.request.get("/api/me/saved").json()
    assert [event["id"] for event in saved["events"]] == ["evt-webmcp-intro"]
    assert manifest(page)["stateVersion"] == before + 1


def test_save_event_from_the_list_by_id(page, orm):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    result = page.webmcp.call_tool("save_event", {"event_id": "evt-ai-agent-101-taipei"})
    assert result["ok"] is True and result["eventId"] == "evt-ai-agent-101-taipei"
    assert page.request.get("/api/me/saved").json()["count"] == 1
