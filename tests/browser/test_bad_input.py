"""Bad input through every imperative tool: always INVALID_INPUT, never a change."""

import pytest
from playwright.sync_api import Error as PlaywrightError

from events.models import Registration, SavedEvent
from harness.tools import manifest, wait_for_tools

pytestmark = pytest.mark.browser

BAD_BY_ID = [
    {"event_id": "evt-webmcp-intro", "extra": 1},
    {"event_id": 123},
    {"event_id": ["evt-webmcp-intro"]},
    {"event_id": {"id": "evt-webmcp-intro"}},
    {"event_id": None},
    {},
    {"event_id": "EVT-WEBMCP-INTRO"},
    {"event_id": "evt-webmcp-intro/../x"},
]
BAD_ROUTE_BOUND = [{"extra": 1}, {"event_id": "evt-webmcp-intro", "limit": 5}, {"autoRegister": True}]


@pytest.mark.parametrize("tool", ["get_event_details", "save_event"])
@pytest.mark.parametrize("tool_input", BAD_BY_ID)
def test_tools_by_id_on_the_list_refuse_bad_input(page, orm, tool, tool_input):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    saves = SavedEvent.objects.count()
    result = page.webmcp.call_tool(tool, tool_input)
    assert result["ok"] is False and result["code"] in ("INVALID_INPUT", "NOT_FOUND"), result
    assert result["code"] == "INVALID_INPUT" or tool_input["event_id"] == "evt-webmcp-intro/../x"
    assert SavedEvent.objects.count() == saves


@pytest.mark.parametrize("tool", ["get_event_details", "save_event", "register_event"])
@pytest.mark.parametrize("tool_input", BAD_ROUTE_BOUND)
def test_route_bound_tools_refuse_extra_keys(page, orm, tool, tool_input):
    page.goto("/events/evt-webmcp-intro/")
    wait_for_tools(page, {"get_event_details", "save_event", "register_event"})
    before = (SavedEvent.objects.count(), Registration.objects.count(), manifest(page)["stateVersion"])
    result = page.webmcp.call_tool(tool, tool_input)
    assert result["ok"] is False
    assert result["code"] in ("INVALID_INPUT", "AUTH_REQUIRED"), result
    if tool != "register_event":
        assert (result["code"], result["reason"]) == ("INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert (
        SavedEvent.objects.count(),
        Registration.objects.count(),
        manifest(page)["stateVersion"],
    ) == before


def test_search_refuses_an_overlong_query_and_the_list_stays(page):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    shown = page.locator("#results").inner_html()
    result = page.webmcp.call_tool("search_events", {"query": "a" * 101})
    assert result["ok"] is False
    assert (result["code"], result["reason"]) == ("INVALID_INPUT", "VALIDATION_ERROR")
    assert "query" in result["fields"]
    assert result["uiUpdated"] is False
    assert page.locator("#results").inner_html() == shown


@pytest.mark.parametrize(
    "tool_input",
    [{"location": "mars"}, {"query": "x" * 101}, {"when": "tomorrow"}, {"query": ["WebMCP"]}],
)
def test_search_with_bad_input_gets_our_envelope(page, tool_input):
    """The browser passes imperative input through unchecked; the site refuses it in its envelope."""
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    result = page.webmcp.call_tool("search_events", {"query": "WebMCP", **tool_input})
    assert (result["ok"], result["code"]) == (False, "INVALID_INPUT"), result
    assert result["reason"] in ("VALIDATION_ERROR", "UNKNOWN_PARAMETER")
    assert set(result["fields"]) == set(tool_input) and result["uiUpdated"] is False


def run_save_event(page, tool_input):
    return page.evaluate(
        """async (input) => {
            const tool = (await document.modelContext.getTools()).find((t) => t.name === 'save_event');
            return JSON.parse(await document.modelContext.executeTool(tool, input));
        }""",
        tool_input,
    )


def test_an_array_as_input_reaches_the_runtime_and_is_refused(page, orm):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    saves = SavedEvent.objects.count()
    result = run_save_event(page, [])
    assert result["ok"] is False and result["code"] == "INVALID_INPUT"
    assert SavedEvent.objects.count() == saves


@pytest.mark.parametrize("tool_input", [None, "evt-webmcp-intro", 5])
def test_input_that_is_not_an_object_is_refused_by_the_browser(page, tool_input):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    with pytest.raises(PlaywrightError, match="not an object"):
        run_save_event(page, tool_input)
