"""An MCP client for tests: the official SDK's own `Client`, connected to your `/mcp` either over real
HTTP (a live server's URL) or in-process through Django's ASGI application (no server, no port).

    async def listing():
        async with mcp_client("/mcp") as client:          # in-process
            return await client.list_tools()

    tools = run(listing())
    async with mcp_client(live_server.url + "/mcp", token="…") as client:   # over HTTP
        result = await client.call_tool("search", {"query": "jazz"})

In-process calls run your views in Django's thread executor, outside the test's transaction: use
pytest-django's `transactional_db` (or `live_server`) for data the tools must see.
Needs the `[mcp]` extra.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

#: Where in-process requests pretend to go (Django's test client uses the same host).
IN_PROCESS_BASE = "http://testserver"


@asynccontextmanager
async def mcp_client(
    url: str = "/mcp",
    *,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    mode: str = "legacy",
    elicitation: Callable[[Any, Any], Awaitable[Any]] | None = None,
    app: Any = None,
    timeout: float = 30,
) -> AsyncIterator[Any]:
    """A connected `mcp.Client`. `url` with a scheme goes over HTTP; a path goes in-process to `app`
    (default: `django.core.asgi.get_asgi_application()`). `mode`: "legacy" (the `initialize` handshake of
    2025-11-25) or "2026-07-28" (stateless discovery). `elicitation` answers the server's questions
    (form elicitation), as a person would."""
    import httpx2  # noqa: PLC0415 (optional: the [mcp] extra)
    from mcp import Client  # noqa: PLC0415 (optional: the [mcp] extra)
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 (same)

    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    options: dict[str, Any] = {"mode": mode}
    if elicitation is not None:
        options["elicitation_callback"] = elicitation
    http_options: dict[str, Any] = {"headers": sent, "timeout": httpx2.Timeout(timeout, read=timeout * 4)}
    if "://" not in url:
        if app is None:
            from django.core.asgi import get_asgi_application  # noqa: PLC0415 (only in-process)

            app = get_asgi_application()
        http_options["transport"] = httpx2.ASGITransport(app=app)
        url = IN_PROCESS_BASE + url
    http = httpx2.AsyncClient(**http_options)
    async with http, Client(streamable_http_client(url, http_client=http), **options) as client:
        yield client


def run[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coroutine)`, also where this thread already runs an event loop: Playwright's sync
    API keeps one running for the whole session once a browser test has started, and `asyncio.run`
    refuses to nest. The coroutine then runs in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # handed back to the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="webmcp-test-run")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]
