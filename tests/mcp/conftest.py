"""MCP tests drive `/mcp` over real HTTP on a live server with the official SDK's own client."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp.types as types
import pytest
from django.core.cache import cache
from django_webmcp.testing.mcp import mcp_client

from accounts.tokens import create_access_token
from events.models import Event
from tests.factories import EventFactory, QuestionFactory, choice_question

MODES = ["legacy", "2026-07-28"]
ALL_SCOPES = ["events:read", "saved:write", "registrations:write"]


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


@asynccontextmanager
async def connect(
    url: str,
    *,
    token: str | None = None,
    mode: str = "legacy",
    elicitation: Callable[[Any, Any], Awaitable[types.ElicitResult]] | None = None,
):
    """The SDK's client on `url`: django-webmcp's test client (`mcp_client`), over real HTTP here."""
    async with mcp_client(url, token=token, mode=mode, elicitation=elicitation) as client:
        yield client


async def call_tool(url: str, token: str | None, name: str, arguments: dict) -> types.CallToolResult:
    """One `tools/call` from a client of its own (connected, called, closed)."""
    async with connect(url, token=token) as client:
        return await client.call_tool(name, arguments)


async def raw_call(url: str, token: str | None, name: str, arguments: dict) -> tuple[int, dict]:
    """One `tools/call` as plain HTTP, for the answers an SDK client turns into an exception (a 401 or
    403 without an OAuth provider): the status and the tool's structured content."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body, headers=headers)
    return response.status_code, response.json()["result"]["structuredContent"]


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.fixture
def mcp_url(live_server) -> str:
    return f"{live_server.url}/mcp"


@pytest.fixture
def token_for():
    def make(user, scopes=ALL_SCOPES) -> str:
        return create_access_token(user=user, name="mcp test", scopes=list(scopes), days=7)[1]

    return make


def questions_workshop() -> Event:
    """An event with registration questions, for every MCP client's tests (the SDK's, fastmcp's): a
    required choice `diet` (none / other) whose "other" reveals a required `diet_other`, and a consent
    `photos`."""
    event = EventFactory(public_id="evt-mcp-questions", title="Questions workshop", capacity=5)
    diet = choice_question(
        event, "diet", ["none", "other"], required=True, label_en="Diet", label_zh_hant="飲食"
    )
    other = QuestionFactory(event=event, identifier="diet_other", required=True, label_en="Which diet?")
    other.show_if, other.show_if_values = diet, ["other"]
    other.save()
    QuestionFactory(event=event, identifier="photos", kind="consent", label_en="Photos are fine")
    return event
