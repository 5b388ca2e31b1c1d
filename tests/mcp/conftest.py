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
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from accounts.tokens import create_access_token

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
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120))
    options: dict[str, Any] = {"mode": mode}
    if elicitation is not None:
        options["elicitation_callback"] = elicitation
    async with http, Client(streamable_http_client(url, http_client=http), **options) as client:
        yield client


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
