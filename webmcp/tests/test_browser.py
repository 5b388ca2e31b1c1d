"""In Chromium with WebMCP (`webmcp_page`): the runtime registers the manifest, calls go to the
endpoints, a consequential call waits for the person's press, and a declarative form tool appears."""

from __future__ import annotations

import pytest

from tests.conftest import pages_open

pytestmark = [pytest.mark.browser, pages_open, pytest.mark.django_db(transaction=True)]


def test_the_list_page_registers_its_tools_and_they_answer(live_server, webmcp_page):
    expected = {"dump_state", "get_item", "search_items", "write_note"}
    expected |= {"lookup_item"} if "lookup_item" in _declared() else set()
    page = webmcp_page.open(live_server.url + "/", expected=sorted(expected))
    search = page.tool("search_items")
    assert search["annotations"] == {"readOnlyHint": True, "untrustedContentHint": True}
    assert search["inputSchema"]["properties"]["kind"]["enum"] == ["", "tea", "cake"]
    assert page.tool("dump_state")["annotations"] == {"readOnlyHint": True, "debugging": True}
    assert page.call("search_items", {"query": "tea"})["count"] == 2
    assert page.call("get_item", {"item_id": "itm-scone"})["name"] == "Scone"


def test_a_consequential_call_waits_for_the_persons_press(live_server, webmcp_page):
    page = webmcp_page.open(live_server.url + "/items/itm-green/", expected=["get_item", "reserve_item"])
    assert page.call("get_item")["id"] == "itm-green"
    page.start("reserve_item", {})
    assert page.pending_confirmation() == {"button": "Reserve", "form": "reserve_item"}
    page.confirm()
    assert page.finish()["reserved"] == "itm-green"


def _declared() -> set[str]:
    from django_webmcp.registry import registry

    return {tool.name for tool in registry.tools()}
