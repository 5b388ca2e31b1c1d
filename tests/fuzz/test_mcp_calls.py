"""Hypothesis on `tools/call` over MCP (E2): whatever arguments an agent sends, through the real `/mcp`
view (Django's test client, the SDK's transport inside), the answer is a result — the use case's body, or
an `isError` envelope with a code the tool can give — never an HTTP 500 or a JSON-RPC internal error,
and a refused call writes nothing. Every answer's `structuredContent`, a refusal's included, fits the
tool's listed `outputSchema`: the TypeScript SDK's client (the MCP Inspector's) validates `isError`
results too. Text that is no Unicode (lone surrogates) gets JSON-RPC's parse error. The caller holds
a token with every scope, so writes are reached; consequential tools answer a preview first (nothing
written) unless the confirmation is valid.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from django.test import Client
from django_webmcp.registry import registry
from hypothesis import given, note, settings
from hypothesis import strategies as st

from accounts.tokens import create_access_token
from tests.factories import UserFactory
from tests.fuzz.conftest import write_snapshot
from tests.fuzz.test_tool_inputs import any_value, event_ids, extra_keys, search_input

pytestmark = pytest.mark.fuzz

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
CODES = {
    "INVALID_INPUT",
    "NOT_FOUND",
    "AUTH_REQUIRED",
    "PERMISSION_DENIED",
    "CONFLICT",
    "CONFIRMATION_REQUIRED",
}
WRITES = {tool.name for tool in registry.tools() if not tool.read_only}


def arguments(seeded: list[str]) -> st.SearchStrategy[tuple[str, Any]]:
    by_id = st.builds(
        lambda event_id, extra: {"event_id": event_id, **extra},
        event_ids(seeded),
        st.one_of(st.just({}), extra_keys({"event_id"})),
    )
    shapes = st.one_of(by_id, search_input(), st.dictionaries(st.text(max_size=8), any_value, max_size=3))
    return st.tuples(st.sampled_from(sorted(tool.name for tool in registry.tools())), shapes)


@pytest.mark.django_db
def test_any_arguments_give_a_result_or_an_envelope_never_a_500(seeded, writes_unthrottled, in_process_wsgi):
    user = UserFactory(username="mcp-fuzzer")
    raw = create_access_token(
        user=user, name="fuzz", scopes=["events:read", "saved:write", "registrations:write"], days=1
    )[1]
    client = Client()
    headers = HEADERS | {"Authorization": f"Bearer {raw}"}
    listing = {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}}
    listed = client.post("/mcp", json.dumps(listing), content_type="application/json", headers=headers)
    output_schemas = {
        tool["name"]: tool["outputSchema"] for tool in json.loads(listed.content)["result"]["tools"]
    }

    @settings(max_examples=150)
    @given(call=arguments(seeded))
    def check(call: tuple[str, Any]) -> None:
        name, args = call
        note(f"{name} {args!r}")
        before = write_snapshot()
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}}
        )
        response = client.post("/mcp", body, content_type="application/json", headers=headers)
        answer = json.loads(response.content)
        if response.status_code == 400:
            # Only text the SDK's JSON parser refuses (a lone surrogate, which is no Unicode) is a
            # protocol error: JSON-RPC's parse error, and nothing done.
            assert answer["error"]["code"] == -32700, answer
            assert write_snapshot() == before
            return
        if response.status_code in (401, 403):
            # The token lacks the tool's scope (the door's checkin:write): the sign-in challenge, whose
            # body is still the envelope, and nothing done.
            content = answer["result"]["structuredContent"]
            assert (content["code"], response.status_code) in (
                ("AUTH_REQUIRED", 401),
                ("PERMISSION_DENIED", 403),
            )
            assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")
            assert write_snapshot() == before
            return
        assert response.status_code == 200, response.content[:300]
        assert "result" in answer, answer
        result = answer["result"]
        content = result["structuredContent"]
        assert "stateVersion" in content
        jsonschema.validate(content, output_schemas[name])
        if result.get("isError"):
            assert content["ok"] is False and content["code"] in CODES, content
            assert write_snapshot() == before, "a refused call wrote something"
        else:
            assert content["ok"] is True
            if name not in WRITES or registry.get(name).consequential:
                assert (
                    write_snapshot() == before
                    or content.get("alreadyRegistered")
                    or content.get("alreadyCancelled")
                ), "a read or an unconfirmed call wrote something"

    check()
