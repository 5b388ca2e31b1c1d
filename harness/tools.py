"""A page's WebMCP tools as an agent sees them, through Playwright's `page.webmcp` and the page itself.

`page` is a Playwright page on one of the site's routes. The site renders each route's tools into a
manifest (`<script id="webmcp-manifest">`) and its runtime registers them with
`document.modelContext`; Chromium lists what is registered. A call that asks the person (a tool whose
manifest entry has `confirm: true`, whose form the runtime marks `data-webmcp-pending` and whose
button it focuses) completes only after the person's press: such a call is started without awaiting
it (`start_tool_call`), the button is found (`pending_confirmation`), pressed or not, and the call
finished (`finish_tool_call`).
"""

from __future__ import annotations

from typing import Any

from django_webmcp.testing import browser as webmcp_browser

from harness import HarnessError

MANIFEST = webmcp_browser.MANIFEST
PENDING_BUTTON = webmcp_browser.PENDING_BUTTON
manifest = webmcp_browser.manifest
manifest_tool_names = webmcp_browser.manifest_tool_names
parse_result = webmcp_browser.parse_result
waits_for_person = webmcp_browser.waits_for_person
pending_confirmation = webmcp_browser.pending_confirmation
tool_call_outcome = webmcp_browser.tool_call_outcome
tool_call_pending = webmcp_browser.tool_call_pending


class ToolsMismatch(HarnessError, webmcp_browser.ToolsMismatch):
    """The registered tools did not become the expected ones in time (or were duplicated)."""


class ToolCallFailed(HarnessError, webmcp_browser.ToolCallFailed):
    """A call started with `start_tool_call` could not start, or failed in the browser."""


# ---- listing -------------------------------------------------------------------------------------


def tools(page) -> list[dict]:
    """What Chromium lists through Playwright: name, description, input schema and annotations of each
    registered tool (annotations in the DevTools spelling: `readOnly`, `untrustedContent`, …)."""
    return webmcp_browser.playwright_tools(page)


def tool_names(page) -> list[str]:
    return sorted(tool["name"] for tool in tools(page))


def wait_for_tools(
    page, expected: list[str] | set[str] | None = None, *, timeout_ms: int = 5_000, poll_ms: int = 50
) -> list[dict]:
    """django_webmcp's `wait_for_tools` over Playwright's listing (`tools`), with the harness's error."""
    try:
        return webmcp_browser.wait_for_tools(
            page, expected, timeout_ms=timeout_ms, poll_ms=poll_ms, lister=tools
        )
    except webmcp_browser.ToolsMismatch as mismatch:
        raise ToolsMismatch(
            str(mismatch), url=mismatch.url, names=mismatch.names, expected=mismatch.expected
        ) from None


def visible_event_ids(page) -> list[str]:
    """Ids of the event cards the person sees in the results list, in order."""
    return page.locator("#results [data-event-id]").evaluate_all("nodes => nodes.map(n => n.dataset.eventId)")


# ---- calls that wait for the person ----------------------------------------------------------------


def start_tool_call(page, name: str, tool_input: Any) -> None:
    """Start a call without waiting for it (a call that asks the person waits for their press)."""
    try:
        webmcp_browser.start_tool_call(page, name, tool_input)
    except webmcp_browser.ToolCallFailed as failed:
        raise ToolCallFailed(str(failed)) from None


def finish_tool_call(page, timeout_ms: int = 10_000) -> Any:
    """Wait for the started call's answer and return it parsed; ToolCallFailed if it failed."""
    try:
        return webmcp_browser.finish_tool_call(page, timeout_ms)
    except webmcp_browser.ToolCallFailed as failed:
        raise ToolCallFailed(str(failed)) from None
