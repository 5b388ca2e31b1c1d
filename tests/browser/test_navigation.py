"""NAV: at every step of a visit the registered tools equal that route's manifest."""

import pytest

from harness.tools import manifest, wait_for_tools

pytestmark = pytest.mark.browser


def assert_tools_follow_manifest(page) -> None:
    expected = {tool["name"] for tool in manifest(page)["tools"]}
    wait_for_tools(page, expected)


def test_list_detail_back_and_htmx_search_never_leave_stale_or_duplicate_tools(page):
    page.goto("/events/")
    assert_tools_follow_manifest(page)
    page.locator("#results a[href*='/events/evt-']").first.click()
    page.wait_for_url("**/events/evt-*/")
    assert_tools_follow_manifest(page)
    assert "search_events" not in {tool["name"] for tool in page.webmcp.tools()}
    page.go_back()
    page.wait_for_url("**/events/")
    assert_tools_follow_manifest(page)
    page.select_option("#search-form [name=level]", "advanced")
    page.locator("#search-form button[type=submit]").click()
    page.wait_for_function("() => location.search.includes('level=advanced')")
    page.wait_for_load_state("networkidle")
    assert_tools_follow_manifest(page)
    names = [tool["name"] for tool in page.webmcp.tools()]
    assert sorted(names) == ["get_event_details", "save_event", "search_events"]
