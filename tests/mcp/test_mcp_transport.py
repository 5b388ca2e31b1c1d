"""`/mcp` at the HTTP level (Django's test client): method, Origin, Host, bad tokens, the write rate,
and the same JSON-RPC call in both eras."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache
from django.test import Client
from django_webmcp.mcp import build_server

from accounts.tokens import create_access_token
from events.models import SavedEvent
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LEGACY = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


def modern(method: str, name: str = "") -> dict[str, str]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    return headers | ({"Mcp-Name": name} if name else {})


def call_body(name: str, arguments: dict, *, era_meta: bool = False) -> str:
    params: dict = {"name": name, "arguments": arguments}
    if era_meta:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})


def post(client: Client, body: str, headers: dict[str, str]):
    return client.post("/mcp", body, content_type="application/json", headers=headers)


def test_only_post(db):
    for method in ("get", "delete", "put"):
        response = getattr(Client(), method)("/mcp")
        assert (response.status_code, response["Allow"]) == (405, "POST")


def test_a_foreign_origin_is_403_and_the_sites_own_is_served(settings):
    settings.SITE_URL = "https://events.example.org"
    body = call_body("search_events", {})
    foreign = post(Client(), body, LEGACY | {"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    own = post(Client(), body, LEGACY | {"Origin": "https://events.example.org"})
    assert own.status_code == 200 and json.loads(own.content)["result"]["structuredContent"]["ok"] is True


def test_an_unknown_host_is_refused_by_allowed_hosts(db):
    response = post(Client(HTTP_HOST="evil.example"), call_body("search_events", {}), LEGACY)
    assert response.status_code == 400


def test_a_bad_token_is_401_with_the_envelope_and_a_challenge(db):
    response = post(
        Client(), call_body("search_events", {}), LEGACY | {"Authorization": "Bearer are_not-a-real-token"}
    )
    assert response.status_code == 401
    body = response.json()
    assert (body["code"], body["reason"]) == ("AUTH_REQUIRED", "INVALID_TOKEN")
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_the_same_call_in_both_eras(db):
    EventFactory(public_id="evt-both", title="Both eras")
    legacy = post(Client(), call_body("get_event_details", {"event_id": "evt-both"}), LEGACY)
    current = post(
        Client(),
        call_body("get_event_details", {"event_id": "evt-both"}, era_meta=True),
        modern("tools/call", "get_event_details"),
    )
    results = [json.loads(r.content)["result"]["structuredContent"] for r in (legacy, current)]
    assert results[0] == results[1] and results[0]["event"]["title"] == "Both eras"


def test_an_unknown_tool_is_a_protocol_error(db):
    response = post(Client(), call_body("delete_everything", {}), LEGACY)
    assert "error" in json.loads(response.content)


def test_writes_share_the_apis_rate_limit(user, settings):
    settings.WRITE_THROTTLE_RATES = {"writes": "2/min"}
    EventFactory(public_id="evt-rate")
    raw = create_access_token(user=user, name="t", scopes=["events:read", "saved:write"], days=1)[1]
    answers = [
        json.loads(
            post(
                Client(),
                call_body("save_event", {"event_id": "evt-rate"}),
                LEGACY | {"Authorization": f"Bearer {raw}"},
            ).content
        )["result"]
        for _ in range(3)
    ]
    assert [answer["isError"] for answer in answers] == [False, False, True]
    limited = answers[2]["structuredContent"]
    assert (limited["code"], limited["reason"]) == ("TEMPORARY_FAILURE", "RATE_LIMITED")
    assert limited["retryAfter"] > 0
    assert SavedEvent.objects.filter(user=user).count() == 1


def test_an_anonymous_write_is_401_with_the_challenge_that_starts_a_sign_in(db):
    """Claude starts the person's sign-in only on an HTTP 401 (a tool error in a 200 never does)."""
    EventFactory(public_id="evt-anon-write")
    response = post(Client(), call_body("save_event", {"event_id": "evt-anon-write"}), LEGACY)
    assert response.status_code == 401
    result = json.loads(response.content)["result"]
    assert result["isError"] is True and result["structuredContent"]["code"] == "AUTH_REQUIRED"
    assert response["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp", '
        'realm="AgentReady Events", scope="saved:write"'
    )
    assert not SavedEvent.objects.exists()


def test_a_listen_request_is_answered_not_left_hanging(db):
    """`subscriptions/listen` takes the SDK's stream path: it must end with an error (we offer no
    subscriptions), not wait on the client for ever (found by the conformance suite)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "subscriptions/listen",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
    )
    response = post(Client(), body, modern("subscriptions/listen"))
    assert "error" in json.loads(response.content)  # the conformance suite checks the exact code


@pytest.mark.slow  # starts a process or a server
def test_the_tool_name_header_is_read_without_its_surrounding_whitespace(live_server):
    """RFC 9110 §5.5, as the conformance suite's sep-2243 check means it, over real HTTP (the server's
    header parsing is what trims), on a tool open to anyone: the suite calls the first listed tool,
    which needs a person (conformance-baseline.yml)."""
    headers = modern("tools/call") | {"Mcp-Name": "  search_events  ", "Content-Type": "application/json"}
    host, port = urlsplit(live_server.url).hostname, urlsplit(live_server.url).port
    connection = http.client.HTTPConnection(host, port, timeout=30)  # httpx refuses to send the spaces
    try:
        connection.request(
            "POST", "/mcp", body=call_body("search_events", {}, era_meta=True), headers=headers
        )
        response = connection.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        connection.close()
    assert status == 200
    assert answer["result"]["structuredContent"]["ok"] is True


def test_the_server_names_itself_as_the_settings_say(db, settings):
    """webmcp/ names no site: the server's name is the project's setting (WEBMCP_SERVER_NAME)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
    )
    response = post(Client(), body, LEGACY)
    assert response.status_code == 200
    assert json.loads(response.content)["result"]["serverInfo"]["name"] == settings.WEBMCP_SERVER_NAME
    settings.WEBMCP_SERVER_NAME = "another-site"
    assert build_server(lambda *args, **kwargs: None).name == "another-site"
