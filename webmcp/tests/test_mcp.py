"""/mcp with the official SDK's client, in-process (the `webmcp_mcp_client` fixture): the same
declarations as the pages', outputs and annotations mapped, debugging tools left out, scopes enforced."""

from __future__ import annotations

import pytest
from django.test import AsyncClient, Client, override_settings
from django_webmcp.testing.mcp import run

from tests.conftest import needs

pytestmark = [needs("TEST_WITH_MCP"), pytest.mark.django_db(transaction=True)]


def test_tools_list_is_the_declarations_seen_by_an_anonymous_caller(webmcp_mcp_client):
    async def listing():
        async with webmcp_mcp_client("/mcp") as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(listing())}
    # reserve_item needs a signed-in person, dump_state is for developers.
    assert sorted(tools) == ["get_item", "lookup_item", "search_items"]
    get_item = tools["get_item"]
    assert get_item.annotations.read_only_hint is True and get_item.annotations.destructive_hint is False
    assert get_item.meta["untrustedContentHint"] is True
    assert get_item.output_schema["properties"]["name"] == {"type": "string"}
    assert set(get_item.output_schema["properties"]) >= {"ok", "stateVersion"}
    # Every answer carries `ok`: a declared output keeps the envelope's one required key.
    assert all(tool.output_schema["required"] == ["ok"] for tool in tools.values())
    assert tools["lookup_item"].output_schema["properties"]["price"] == {"type": "string"}
    # The envelope's keys keep the envelope's types, which a refusal's values fit (a null stateVersion).
    assert all(
        tool.output_schema["properties"]["stateVersion"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        for tool in tools.values()
    )


def test_a_token_with_the_scope_sees_and_calls_the_write_after_confirming(webmcp_mcp_client):
    async def scenario():
        async with webmcp_mcp_client("/mcp", token="token-all") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            first = await client.call_tool("reserve_item", {"item_id": "itm-green"})
            confirmation = first.structured_content["confirmation"]
            done = await client.call_tool(
                "reserve_item", {"item_id": "itm-green", "confirmation": confirmation}
            )
            return names, first, done

    names, first, done = run(scenario())
    assert "reserve_item" in names
    assert first.is_error and first.structured_content["code"] == "CONFIRMATION_REQUIRED"
    assert first.structured_content["preview"] == "Reserve itm-green?"
    assert not done.is_error and done.structured_content["reserved"] == "itm-green"


def test_a_route_bound_tool_without_input_names_its_object_over_mcp(webmcp_mcp_client):
    """reserve_item takes nothing on its page (`input_serializer=None`); over MCP there is no page, so
    its closed schema must list the route parameter or no client that follows the schema can call it."""

    async def listing():
        async with webmcp_mcp_client("/mcp", token="token-all") as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    schema = run(listing())["reserve_item"].input_schema
    assert schema["additionalProperties"] is False
    assert schema["properties"]["item_id"] == {"type": "string", "minLength": 1}  # <str:item_id>
    assert schema["required"] == ["item_id"]
    assert list(schema["properties"]) == ["item_id", "confirmation"]


def test_a_call_out_of_scope_is_refused_with_the_challenge():
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "reserve_item", "arguments": {"item_id": "itm-green"}},
    }
    # The async test client in a loop of its own: a browser test earlier in the run keeps Playwright's
    # loop running in this thread, where the sync client cannot call an async view.
    response = run(
        AsyncClient().post(
            "/mcp",
            body,
            content_type="application/json",
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
                "Authorization": "Bearer token-read",
            },
        )
    )
    assert response.status_code == 403
    assert response["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp", '
        'realm="tests", error="insufficient_scope", scope="items:write"'
    )


@override_settings(WEBMCP_MCP_DEBUGGING_TOOLS=True, WEBMCP_MCP_HIDE_OUT_OF_SCOPE=False)
def test_debugging_tools_only_when_asked_for(webmcp_mcp_client):
    async def listing():
        async with webmcp_mcp_client("/mcp") as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert "dump_state" in run(listing()) and "reserve_item" in run(listing())


def test_the_metadata_document():
    document = Client().get("/.well-known/oauth-protected-resource/mcp").json()
    assert document["resource"] == "http://testserver/mcp"
    assert document["authorization_servers"] == ["https://auth.example.org"]


@needs("TEST_LOGIN_REQUIRED")
def test_login_required_keeps_mcp_and_metadata_open_and_pages_closed(webmcp_mcp_client):
    assert Client().get("/").status_code == 302
    assert Client().get("/.well-known/oauth-protected-resource/mcp").status_code == 200

    async def listing():
        async with webmcp_mcp_client("/mcp") as client:
            return (await client.list_tools()).tools

    assert run(listing())
