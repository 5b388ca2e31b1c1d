"""A page carries its manifest, the fingerprint, the runtime and the CSRF token; a tool call of a page
route is answered as a tool call."""

from __future__ import annotations

import json

from django.test import Client
from django_webmcp.registry import registry

from tests.conftest import pages_open

pytestmark = pages_open


def manifest(html: str) -> dict:
    start = html.index('<script id="webmcp-manifest" type="application/json">') + len(
        '<script id="webmcp-manifest" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


def test_the_list_page():
    html = Client().get("/").content.decode()
    assert f'<meta name="webmcp-catalogue" content="{registry.fingerprint()}">' in html
    assert '<script type="module" src="/static/webmcp/webmcp.js"></script>' in html
    assert '<meta name="csrf-token"' in html
    assert {tool["name"] for tool in manifest(html)["tools"]} >= {"search_items", "get_item", "dump_state"}


def test_the_detail_page_offers_the_confirmed_write_and_marks_its_form():
    html = Client().get("/items/itm-green/").content.decode()
    assert [tool["name"] for tool in manifest(html)["tools"]] == ["get_item", "reserve_item"]
    assert 'data-webmcp-confirm="reserve_item"' in html


def test_a_tool_call_of_the_page_route_answers_json_and_a_person_is_redirected():
    client = Client()
    answer = client.post(
        "/items/itm-black/reserve", "", content_type="application/json", HTTP_X_WEBMCP_TOOL="reserve_item"
    )
    assert answer.json() == {"ok": True, "reserved": "itm-black", "tool": "reserve_item"}
    assert client.post("/items/itm-scone/reserve").status_code == 302
