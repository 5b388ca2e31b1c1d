"""One registry behind every path: the WebMCP catalogue (what the pages register, which the browser
suite compares with Chromium's own list), MCP's `tools/list` and `/llms.txt` agree field by field."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django_webmcp.mcp import CONFIRMATION_PARAM
from django_webmcp.registry import registry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PAGES = ("event-list", "event-detail", "me", "check-in")


@pytest.fixture
def mcp_tools_listed(db) -> dict[str, dict]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    response = Client().post(
        "/mcp",
        body,
        content_type="application/json",
        headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
    )
    return {tool["name"]: tool for tool in json.loads(response.content)["result"]["tools"]}


def webmcp_tools() -> dict[str, list[dict]]:
    """Every page's catalogue entry of each tool (a tool may be offered on several pages)."""
    found: dict[str, list[dict]] = {}
    for page in PAGES:
        for tool in registry.catalogue(page)["tools"]:
            found.setdefault(tool["name"], []).append(tool)
    return found


def test_the_same_tools_with_the_same_words(mcp_tools_listed):
    pages = webmcp_tools()
    headless = {tool.name for tool in registry.tools() if tool.headless}  # MCP only: no page offers them
    assert set(mcp_tools_listed) == set(pages) | headless == {tool.name for tool in registry.tools()}
    assert not headless & set(pages)
    for name, tool in mcp_tools_listed.items():
        for offered in pages.get(name, []):
            assert offered["description"] == tool["description"], name
        declaration = registry.get(name)
        assert tool.get("title") == (declaration.title or None), name


def test_the_same_input_schemas(mcp_tools_listed):
    for name, offered_on_pages in webmcp_tools().items():
        mcp_schema = json.loads(json.dumps(mcp_tools_listed[name]["inputSchema"]))
        confirmation = mcp_schema["properties"].pop(CONFIRMATION_PARAM, None)
        assert (confirmation is not None) == registry.get(name).consequential, name
        param = registry.get(name).route_param
        for offered in offered_on_pages:
            if (
                param
                and param not in offered["inputSchema"]["properties"]
                and param in mcp_schema["properties"]
            ):
                # route-bound on the page: over MCP the route's parameter is explicit and required,
                # the rest (the check-in page's query or attendee) the very schema
                expected = json.loads(json.dumps(mcp_schema))
                expected["properties"].pop(param)
                expected["required"] = [key for key in expected.get("required", []) if key != param]
                assert param in mcp_schema["required"], name
                page = offered["inputSchema"]
                if registry.get(name).route_schema is not None:
                    # its page input is the page's object's own (register_event: that event's answers,
                    # nothing for an event without questions), within what MCP takes
                    assert set(page["properties"]) <= set(expected["properties"]), name
                    continue
                assert page["properties"] == expected["properties"], name
                assert page.get("required", []) == expected["required"], name
            else:  # input-bound: the very schema
                assert offered["inputSchema"] == mcp_schema, name


def test_the_same_hints(mcp_tools_listed):
    for name, offered_on_pages in webmcp_tools().items():
        tool = mcp_tools_listed[name]
        hints = tool["annotations"]
        for offered in offered_on_pages:
            ours = offered.get("annotations", {})
            assert hints["readOnlyHint"] is bool(ours.get("readOnlyHint")), name
            assert bool((tool.get("_meta") or {}).get("untrustedContentHint")) is bool(
                ours.get("untrustedContentHint")
            ), name
            assert (CONFIRMATION_PARAM in tool["inputSchema"]["properties"]) is bool(
                ours.get("consequentialHint")
            ), name
        assert hints["openWorldHint"] is False
        assert hints["destructiveHint"] is registry.get(name).destructive
        assert hints["idempotentHint"] is registry.get(name).idempotent


def test_llms_txt_describes_the_mcp_tools_as_listed(mcp_tools_listed):
    text = Client().get("/llms.txt").content.decode()
    section = text[text.index("## MCP") : text.index("## API")]
    for name, tool in mcp_tools_listed.items():
        [line] = [line for line in section.splitlines() if line.startswith(f"- `{name}`")]
        assert line.endswith(f": {tool['description']}"), name
        assert ("read-only" in line) is tool["annotations"]["readOnlyHint"], name
        assert ("destructive" in line) is tool["annotations"]["destructiveHint"], name
        block = section[section.index(line) :].split("\n- `")[0]
        for param in tool["inputSchema"]["properties"]:
            assert f"  - `{param}` (" in block, (name, param)
