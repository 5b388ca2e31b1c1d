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

import json
import time
from typing import Any

from harness import HarnessError

MANIFEST = "#webmcp-manifest"


class ToolsMismatch(HarnessError, AssertionError):
    """The registered tools did not become the expected ones in time (or were duplicated)."""

    def __init__(self, message: str, *, url: str, names: list[str], expected: list[str] | None) -> None:
        super().__init__(message)
        self.url, self.names, self.expected = url, names, expected


class ToolCallFailed(HarnessError, AssertionError):
    """A call started with `start_tool_call` could not start, or failed in the browser."""


# ---- listing -------------------------------------------------------------------------------------


def manifest(page) -> dict:
    """The manifest the server rendered into the page (what the runtime registers from)."""
    return json.loads(page.locator(MANIFEST).text_content())


def manifest_tool_names(page) -> list[str] | None:
    """The manifest's tool names, sorted; None when the page has no manifest or it cannot be read."""
    node = page.locator(MANIFEST)
    if node.count() == 0:
        return None
    try:
        return sorted(tool["name"] for tool in json.loads(node.first.text_content() or "{}").get("tools", []))
    except (ValueError, KeyError, TypeError):
        return None


def tools(page) -> list[dict]:
    """What Chromium lists: name, description, input schema and annotations of each registered tool."""
    return page.webmcp.tools()


def tool_names(page) -> list[str]:
    return sorted(tool["name"] for tool in tools(page))


def wait_for_tools(
    page, expected: list[str] | set[str] | None = None, *, timeout_ms: int = 5_000, poll_ms: int = 50
) -> list[dict]:
    """Poll until the registered tools are `expected` (names, any order) and return them: form tools
    appear one task after parsing, and tools follow swaps. Without `expected`, until they equal the
    page's manifest (read again at every poll); on a page without one, until the list holds still and
    is not empty. Raises ToolsMismatch after `timeout_ms`, or when a tool is registered twice."""
    wanted_now = None if expected is None else sorted(expected)
    deadline = time.monotonic() + timeout_ms / 1000
    previous: list[str] | None = None
    while True:
        listed = tools(page)
        names = sorted(tool["name"] for tool in listed)
        wanted = wanted_now if expected is not None else manifest_tool_names(page)
        if (wanted is not None and names == wanted) or (
            expected is None and wanted is None and names and names == previous
        ):
            if len(names) != len(set(names)):
                raise ToolsMismatch(
                    f"duplicate tools registered: {names}", url=page.url, names=names, expected=wanted
                )
            return listed
        if time.monotonic() > deadline:
            raise ToolsMismatch(
                f"tools on {page.url} are {names}, expected {wanted}",
                url=page.url,
                names=names,
                expected=wanted,
            )
        previous = names
        page.wait_for_timeout(poll_ms)


def visible_event_ids(page) -> list[str]:
    """Ids of the event cards the person sees in the results list, in order."""
    return page.locator("#results [data-event-id]").evaluate_all("nodes => nodes.map(n => n.dataset.eventId)")


# ---- calls that wait for the person ----------------------------------------------------------------


_WAITS_FOR_PERSON = """(name) => {
    try {
        const node = document.getElementById('webmcp-manifest');
        const tools = JSON.parse((node && node.textContent) || '{}').tools || [];
        return tools.some((tool) => tool.name === name && tool.confirm === true);
    } catch (error) { return false; }
}"""

_START_CALL = """async ([name, input]) => {
    window.__harnessCall = undefined;
    const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
    if (!tool) return false;
    document.modelContext.executeTool(tool, input).then(
        (text) => { window.__harnessCall = {text}; },
        (error) => { window.__harnessCall = {error: String(error)}; });
    return true;
}"""

_PENDING_CONFIRMATION = """() => {
    const form = document.querySelector('form[data-webmcp-pending]');
    const button = form && form.querySelector(
        ':is(button[type=submit], button:not([type]), input[type=submit])');
    if (!button) return null;
    return {button: (button.textContent || button.value || '').trim(),
            form: form.dataset.webmcpConfirm || form.id || null};
}"""


def waits_for_person(page, name: str) -> bool:
    """Whether a call of `name` completes only when the person presses the page's button: a tool the
    manifest marks `confirm: true`."""
    return page.evaluate(_WAITS_FOR_PERSON, name)


def start_tool_call(page, name: str, tool_input: Any) -> None:
    """Start a call without waiting for it (a call that asks the person waits for their press)."""
    if not page.evaluate(_START_CALL, [name, tool_input]):
        raise ToolCallFailed(f"no tool {name} on {page.url}")


def tool_call_outcome(page) -> dict | None:
    """The started call's outcome, `{"text": …}` or `{"error": …}`; None while it is still pending."""
    return page.evaluate("() => window.__harnessCall")


def tool_call_pending(page) -> bool:
    return tool_call_outcome(page) is None


#: The button of the form waiting for the person's press (a locator for Playwright).
PENDING_BUTTON = "form[data-webmcp-pending] :is(button[type=submit], button:not([type]), input[type=submit])"


def pending_confirmation(page) -> dict | None:
    """The button a started call waits on for the person's press, `{"button": its text, "form": the
    tool it confirms, or the form's id}`: the submit button of the form the runtime marked
    `data-webmcp-pending` (PENDING_BUTTON). None when nothing waits."""
    return page.evaluate(_PENDING_CONFIRMATION)


def parse_result(text: Any) -> Any:
    """A tool's answer as the browser hands it over: JSON text, parsed when it is JSON."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def finish_tool_call(page, timeout_ms: int = 10_000) -> Any:
    """Wait for the started call's answer and return it parsed; ToolCallFailed if it failed."""
    page.wait_for_function("() => window.__harnessCall !== undefined", timeout=timeout_ms)
    outcome = tool_call_outcome(page)
    if "error" in outcome:
        raise ToolCallFailed(f"the tool call failed in the browser: {outcome['error']}")
    return parse_result(outcome["text"])
