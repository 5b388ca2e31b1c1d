"""search_events in Chromium: the declarative form, its schema, and the visible list following it."""

from urllib.parse import parse_qs, urlparse

import pytest
from django_webmcp.registry import registry

from events.contract import EventSearchInput
from harness.tools import visible_event_ids, wait_for_tools

pytestmark = pytest.mark.browser


def search_tool(page) -> dict:
    page.goto("/events/")
    tools = wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    return next(tool for tool in tools if tool["name"] == "search_events")


def test_one_source_the_browser_schema_of_the_search_form_equals_the_registry(page):
    derived = search_tool(page)["inputSchema"]
    declared = registry.get("search_events").input_schema()
    assert set(derived["properties"]) == set(declared["properties"]) == set(EventSearchInput().fields)
    for name, spec in declared["properties"].items():
        browser = derived["properties"][name]
        assert browser["type"] == spec["type"], name
        assert browser.get("enum") == spec.get("enum"), name
        assert browser.get("description") == spec.get("description"), name
    # Chromium does not turn maxlength into maxLength; the attribute it reads is checked instead.
    assert page.locator("#search-form [name=query]").get_attribute("maxlength") == str(
        declared["properties"]["query"]["maxLength"]
    )
    assert derived.get("required", []) == declared.get("required", [])


def test_sel_01_free_beginner_taipei_finds_the_workshop_and_the_list_shows_the_same(page):
    search_tool(page)
    result = page.webmcp.call_tool(
        "search_events", {"location": "taipei", "price": "free", "level": "beginner"}
    )
    assert result["ok"] is True
    returned = [event["id"] for event in result["events"]]
    assert "evt-webmcp-intro" in returned
    assert result["uiUpdated"] is True
    assert visible_event_ids(page) == returned
    query = parse_qs(urlparse(page.url).query)
    assert query["location"] == ["taipei"] and query["price"] == ["free"] and query["level"] == ["beginner"]


def test_arg_01_zero_results_are_not_relaxed_and_the_page_says_so(page):
    search_tool(page)
    arguments = {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"}
    result = page.webmcp.call_tool("search_events", arguments)
    assert result["ok"] is True and result["count"] == 0 and result["events"] == []
    assert result["constraintsRelaxed"] is False and result["requiresUserDecision"] is True
    assert result["appliedFilters"] == arguments
    assert "ask" in result["nextAction"].lower()
    assert visible_event_ids(page) == []
    assert page.locator("#results [data-empty-results]").is_visible()


def test_a_person_and_an_agent_see_the_same_list_for_the_same_search(page):
    search_tool(page)
    page.select_option("#search-form [name=location]", "online")
    page.locator("#search-form button[type=submit]").click()
    page.wait_for_function("() => location.search.includes('location=online')")
    page.wait_for_load_state("networkidle")
    by_person = visible_event_ids(page)
    result = page.webmcp.call_tool("search_events", {"location": "online"})
    assert [event["id"] for event in result["events"]] == by_person
    assert by_person
