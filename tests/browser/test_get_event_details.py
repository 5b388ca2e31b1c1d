"""get_event_details in Chromium: ORD-01, the route-bound detail page, and RECOVERY-01."""

import json

import pytest

from harness.tools import wait_for_tools

pytestmark = pytest.mark.browser

DETAIL_TOOLS = {"get_event_details", "save_event", "register_event"}


def test_ord_01_search_then_details_with_the_same_id_match_the_api(page):
    page.goto("/events/")
    wait_for_tools(page, {"search_events", "get_event_details", "save_event"})
    found = page.webmcp.call_tool("search_events", {"query": "WebMCP"})
    first = found["events"][0]["id"]
    details = page.webmcp.call_tool("get_event_details", {"event_id": first})
    api = json.loads(page.request.get(f"/api/events/{first}").text())
    assert details["ok"] is True and details["event"]["id"] == first
    assert details["event"] == api["event"]
    assert details["uiUpdated"] is False


def test_route_bound_details_describe_the_pages_event(page):
    page.goto("/events/evt-webmcp-intro/")
    wait_for_tools(page, DETAIL_TOOLS)
    result = page.webmcp.call_tool("get_event_details", {})
    assert result["ok"] is True and result["event"]["id"] == "evt-webmcp-intro"
    assert result["event"]["title"] == "WebMCP 入門工作坊"
    assert result["event"]["startsAt"] == "2027-01-23T10:00:00+08:00"


def test_route_bound_details_refuse_another_event(page):
    page.goto("/events/evt-webmcp-intro/")
    wait_for_tools(page, DETAIL_TOOLS)
    result = page.webmcp.call_tool("get_event_details", {"event_id": "evt-ai-agent-101-taipei"})
    assert result["ok"] is False
    assert (result["code"], result["reason"]) == ("INVALID_INPUT", "CURRENT_EVENT_MISMATCH")
    assert result["retryable"] is False


def test_route_bound_details_treat_null_as_absent(page):
    page.goto("/events/evt-webmcp-intro/")
    wait_for_tools(page, DETAIL_TOOLS)
    result = page.webmcp.call_tool("get_event_details", {"event_id": None})
    assert result["ok"] is True and result["event"]["id"] == "evt-webmcp-intro"


def test_recovery_01_a_blocked_api_is_a_retryable_failure_then_success(page):
    page.goto("/events/evt-webmcp-intro/")
    wait_for_tools(page, DETAIL_TOOLS)
    blocked = "**/api/events/evt-webmcp-intro"
    page.route(blocked, lambda route: route.abort())
    failed = page.webmcp.call_tool("get_event_details", {})
    assert failed["ok"] is False
    assert (failed["code"], failed["reason"]) == ("TEMPORARY_FAILURE", "EVENT_SERVICE_UNAVAILABLE")
    assert failed["retryable"] is True and failed["uiUpdated"] is False
    # Meanwhile the page and the other tools keep working.
    assert page.locator("h1").is_visible()
    assert wait_for_tools(page, DETAIL_TOOLS)
    saved = page.webmcp.call_tool("save_event", {})
    assert saved["ok"] is True
    page.unroute(blocked)
    recovered = page.webmcp.call_tool("get_event_details", {})
    assert recovered["ok"] is True and recovered["event"]["id"] == "evt-webmcp-intro"
    assert recovered["saved"] is True
