"""Bad input through every imperative tool: always INVALID_INPUT, never a change.

The validation rules themselves are the actions' (tests/api, tests/pages); here each kind of bad input
goes through the browser once. A page is loaded once per test and every input of the test is called on
it, each as its own subtest (reported apart, and a refused call must leave that one page unchanged for
the next), so a case costs a tool call rather than a page load.
"""

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


def test_tools_by_id_on_the_list_refuse_bad_input(page, orm, subtests):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    for tool in ("get_event_details", "save_event"):
        for tool_input in BAD_BY_ID:
            with subtests.test(tool=tool, tool_input=tool_input):
                saves = SavedEvent.objects.count()
                result = page.webmcp.call_tool(tool, tool_input)
                assert result["ok"] is False and result["code"] in ("INVALID_INPUT", "NOT_FOUND"), result
                assert result["code"] == "INVALID_INPUT" or tool_input["event_id"] == "evt-webmcp-intro/../x"
                assert SavedEvent.objects.count() == saves


def test_route_bound_tools_refuse_extra_keys(page, orm, subtests):
    page.goto("/events/evt-webmcp-intro/")
    wait_for_tools(page, {"get_event_details", "save_event", "register_event"})
    for tool in ("get_event_details", "save_event", "register_event"):
        for tool_input in BAD_ROUTE_BOUND:
            with subtests.test(tool=tool, tool_input=tool_input):
                before = (
                    SavedEvent.objects.count(),
                    Registration.objects.count(),
                    manifest(page)["stateVersion"],
                )
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


def test_search_with_bad_input_gets_our_envelope(page, subtests):
    """The browser passes imperative input through unchecked; the site refuses it in its envelope."""
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    for tool_input in (
        {"location": "mars"},
        {"query": "x" * 101},
        {"when": "tomorrow"},
        {"query": ["WebMCP"]},
    ):
        with subtests.test(tool_input=tool_input):
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


def test_input_that_is_not_an_object_is_refused_by_the_browser(page, subtests):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    for tool_input in (None, "evt-webmcp-intro", 5):
        with subtests.test(tool_input=tool_input), pytest.raises(PlaywrightError, match="not an object"):
            run_save_event(page, tool_input)
