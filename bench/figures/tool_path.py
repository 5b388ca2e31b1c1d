"""The tool path of an agent task: what an agent does and reads when it uses the page's WebMCP tools.

It reads the page's tool list when it arrives (names, descriptions, input schemas, annotations: what a
model is given to choose a call), then each call's JSON answer. Calls go through Playwright's
`page.webmcp`, as the tests and the evals make them. Each call is also checked to make exactly one
request to the site (the runtime's contract).
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

from bench.infra import BenchError
from harness.tools import manifest_tool_names

TIMEOUT_MS = 15_000


def manifest_names(page) -> list[str]:
    names = manifest_tool_names(page)
    if names is None:
        raise BenchError(f"no readable manifest on {page.url}")
    return names


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def json_text(value: Any) -> str:
    """A value as the browser hands a tool's answer over: compact JSON, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def counted(request, origin: str) -> bool:
    """A request the page made to the site itself (static files are not counted)."""
    parts = urlsplit(request.url)
    return f"{parts.scheme}://{parts.netloc}" == origin and not parts.path.startswith("/static/")


class ToolAgent:
    """An agent on a loaded page that acts only through the page's tools.

    One step is one tool call and the JSON answer it reads back. Reading the tool list on arrival is
    not a step of its own (no action), but its bytes are read, as the UI path's first snapshot is.
    """

    def __init__(self, page, base_url: str) -> None:
        self.page = page
        self.origin = "{0.scheme}://{0.netloc}".format(urlsplit(base_url))
        self.steps = 0
        self.reads: list[dict] = []  # each thing read: what it was, its bytes, the step's ms
        self.calls: list[dict] = []  # each call: its tool and its requests
        self._requests: list[str] | None = None
        page.on("request", self._on_request)

    def _on_request(self, request) -> None:
        if self._requests is not None and counted(request, self.origin):
            self._requests.append(f"{request.method} {urlsplit(request.url).path}")

    def arrive(self) -> list[dict]:
        """Read the page's tool list (what Chromium lists for the page)."""
        started = time.perf_counter()
        tools = self.page.webmcp.tools()
        ms = round((time.perf_counter() - started) * 1000, 1)
        self.reads.append({"after": "tool list", "bytes": utf8_size(json_text(tools)), "ms": ms})
        return tools

    def call(self, name: str, arguments: dict) -> Any:
        """One step: call a tool and read its answer."""
        self._requests = []
        started = time.perf_counter()
        try:
            result = self.page.webmcp.call_tool(name, arguments)
        finally:
            seconds = time.perf_counter() - started
            requests, self._requests = self._requests, None
        self.steps += 1
        ms = round(seconds * 1000, 1)
        self.reads.append({"after": name, "bytes": utf8_size(json_text(result)), "ms": ms})
        self.calls.append({"tool": name, "requests": requests})
        if not (isinstance(result, dict) and result.get("ok") is True):
            raise BenchError(f"{name}({arguments}) did not answer ok: {str(result)[:500]}")
        return result
