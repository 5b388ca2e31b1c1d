"""A page's WebMCP tools in a real Chromium, as an agent sees them (Playwright as the driver).

Written for Debian's `chromium` (any build with `--enable-features=WebMCP`) and Playwright >= 1.65,
which is only a driver here: `playwright install` is never needed. What differs between Chromium
versions is smoothed over in one place:

- `list_tools` reads `document.modelContext.getTools()` inside the page and copies each field one by one
  (from Chrome 160 the entries are `Tool` objects whose `JSON.stringify` is `{}`); schemas given as JSON
  text are parsed; `annotations` holds the true hints in the draft's spelling (`readOnlyHint`, …)
  whichever spelling the browser used (Chromium 156 reports every hint, unset ones as false; later
  builds report absent ones as null: only true ones are comparable across them).
- `call_tool` runs `executeTool` inside the page (the input is an object; the answer is always text,
  parsed here when it is JSON). A tool that throws gives the caller only a generic error: it is raised
  as `ToolCallFailed`.
- `playwright_tools` is Playwright's own `page.webmcp.tools()`, with the DevTools spelling (`readOnly`).

Playwright is imported only when a browser is launched, so importing this module costs nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The Chromium binary; `WEBMCP_CHROMIUM` in the environment names another one.
CHROMIUM = Path(os.environ.get("WEBMCP_CHROMIUM", "/usr/bin/chromium"))
#: `--enable-features=WebMCP` must appear literally (Playwright's `page.webmcp` looks for it); the rest
#: keeps the browser quiet and on loopback.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--enable-features=WebMCP",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
)
#: The draft's annotation names, and the DevTools spelling some clients report them in.
ANNOTATIONS = {
    "readOnlyHint": "readOnly",
    "untrustedContentHint": "untrustedContent",
    "consequentialHint": "consequential",
    "debugging": "debugging",
}
MANIFEST = "#webmcp-manifest"


class WebMCPTestError(Exception):
    """The browser or a tool call did not do what the test needs; the message says which."""


class ChromiumMissing(WebMCPTestError):
    """No Chromium at `CHROMIUM`."""


class ToolsMismatch(WebMCPTestError, AssertionError):
    """The registered tools did not become the expected ones in time (or were duplicated)."""

    def __init__(self, message: str, *, url: str, names: list[str], expected: list[str] | None) -> None:
        super().__init__(message)
        self.url, self.names, self.expected = url, names, expected


class ToolCallFailed(WebMCPTestError, AssertionError):
    """A call could not start, or failed in the browser (the tool threw, or no such tool)."""


def installed() -> bool:
    return CHROMIUM.exists()


@contextmanager
def launch(headless: bool = True, *, args: Iterable[str] = ()) -> Iterator[Any]:
    """`with launch() as browser:` — Playwright started, Chromium launched with `CHROMIUM_ARGS` (plus
    `args`), both closed at the end."""
    if not installed():
        raise ChromiumMissing(f"{CHROMIUM} is missing (Debian: apt-get install chromium)")
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (optional: only when a browser is started)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=headless, args=[*CHROMIUM_ARGS, *args]
        )
        try:
            yield browser
        finally:
            browser.close()


# ---- listing -------------------------------------------------------------------------------------

_LIST_TOOLS = """async () => {
    const context = document.modelContext;
    if (!context || typeof context.getTools !== 'function') return null;
    const parse = (value) => {
        if (typeof value !== 'string') return value ?? null;
        try { return JSON.parse(value); } catch (error) { return value; }
    };
    const spellings = SPELLINGS;
    const tools = await context.getTools();
    return Array.from(tools, (tool) => {
        const annotations = {};
        for (const [draft, devtools] of Object.entries(spellings)) {
            const value = tool.annotations?.[draft] ?? tool.annotations?.[devtools];
            if (value === true) annotations[draft] = true;
        }
        return {
            name: tool.name,
            title: tool.title ?? null,
            description: tool.description ?? '',
            inputSchema: parse(tool.inputSchema),
            outputSchema: parse(tool.outputSchema),
            annotations,
        };
    });
}""".replace("SPELLINGS", json.dumps(ANNOTATIONS))


def list_tools(page: Any) -> list[dict[str, Any]]:
    """The page's registered tools, sorted by name: `name`, `title`, `description`, `inputSchema`,
    `outputSchema` and `annotations` (the true hints, draft spelling) — the same shape on every Chromium."""
    listed = page.evaluate(_LIST_TOOLS)
    if listed is None:
        raise WebMCPTestError(
            f"{page.url} has no document.modelContext: is Chromium started with --enable-features=WebMCP, "
            "and is the page a secure context (http://127.0.0.1, http://localhost, https)?"
        )
    return sorted(listed, key=lambda tool: tool["name"])


def playwright_tools(page: Any) -> list[dict[str, Any]]:
    """Playwright's own listing (`page.webmcp.tools()`): DevTools spelling of the annotations."""
    return list(page.webmcp.tools())


def tool_names(page: Any) -> list[str]:
    return [tool["name"] for tool in list_tools(page)]


def manifest(page: Any) -> dict[str, Any]:
    """The manifest the server rendered into the page (`{% webmcp_tools %}`)."""
    return dict(json.loads(page.locator(MANIFEST).text_content()))


def manifest_tool_names(page: Any) -> list[str] | None:
    """The manifest's tool names, sorted; None when the page has no readable manifest."""
    node = page.locator(MANIFEST)
    if node.count() == 0:
        return None
    try:
        return sorted(tool["name"] for tool in json.loads(node.first.text_content() or "{}").get("tools", []))
    except (ValueError, KeyError, TypeError):
        return None


def wait_for_tools(
    page: Any,
    expected: Iterable[str] | None = None,
    *,
    timeout_ms: int = 5_000,
    poll_ms: int = 50,
    lister: Any = None,
) -> list[dict[str, Any]]:
    """Poll until the registered tools are `expected` (names, any order) and return them: tools appear
    after the page's scripts run, declarative form tools one task after parsing, and tools follow swaps.
    Without `expected`, until they equal the page's manifest; on a page without one, until the list
    holds still and is not empty. `lister` lists the tools (default `list_tools`). Raises
    `ToolsMismatch` after `timeout_ms`, or when a tool is registered twice."""
    lister = lister or list_tools
    wanted_now = None if expected is None else sorted(expected)
    deadline = time.monotonic() + timeout_ms / 1000
    previous: list[str] | None = None
    while True:
        listed = lister(page)
        names = sorted(tool["name"] for tool in listed)
        wanted = wanted_now if expected is not None else manifest_tool_names(page)
        if (wanted is not None and names == wanted) or (
            expected is None and wanted is None and names and names == previous
        ):
            if len(names) != len(set(names)):
                raise ToolsMismatch(
                    f"duplicate tools registered: {names}", url=page.url, names=names, expected=wanted
                )
            return list(listed)
        if time.monotonic() > deadline:
            raise ToolsMismatch(
                f"tools on {page.url} are {names}, expected {wanted}",
                url=page.url,
                names=names,
                expected=wanted,
            )
        previous = names
        page.wait_for_timeout(poll_ms)


# ---- calls ------------------------------------------------------------------------------------------

_START_CALL = """async ([name, input]) => {
    window.__webmcpTestCall = undefined;
    const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
    if (!tool) return false;
    document.modelContext.executeTool(tool, input).then(
        (text) => { window.__webmcpTestCall = {text}; },
        (error) => { window.__webmcpTestCall = {error: String(error)}; });
    return true;
}"""

_WAITS_FOR_PERSON = """(name) => {
    try {
        const node = document.getElementById('webmcp-manifest');
        const tools = JSON.parse((node && node.textContent) || '{}').tools || [];
        return tools.some((tool) => tool.name === name && tool.confirm === true);
    } catch (error) { return false; }
}"""

_PENDING_CONFIRMATION = """() => {
    const form = document.querySelector('form[data-webmcp-pending]');
    const button = form && form.querySelector(
        ':is(button[type=submit], button:not([type]), input[type=submit])');
    if (!button) return null;
    return {button: (button.textContent || button.value || '').trim(),
            form: form.dataset.webmcpConfirm || form.id || null};
}"""

#: The button of the form a call waits on for the person's press (a Playwright selector).
PENDING_BUTTON = "form[data-webmcp-pending] :is(button[type=submit], button:not([type]), input[type=submit])"


def parse_result(text: Any) -> Any:
    """A tool's answer as the browser hands it over: JSON text, parsed when it is JSON."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def start_tool_call(page: Any, name: str, tool_input: Any) -> None:
    """Start a call without waiting for it (a call that asks the person waits for their press)."""
    if not page.evaluate(_START_CALL, [name, tool_input]):
        raise ToolCallFailed(f"no tool {name} on {page.url}")


def tool_call_outcome(page: Any) -> dict[str, Any] | None:
    """The started call's outcome, `{"text": …}` or `{"error": …}`; None while it is pending."""
    outcome = page.evaluate("() => window.__webmcpTestCall")
    return dict(outcome) if outcome is not None else None


def tool_call_pending(page: Any) -> bool:
    return tool_call_outcome(page) is None


def finish_tool_call(page: Any, timeout_ms: int = 10_000) -> Any:
    """Wait for the started call's answer and return it parsed; `ToolCallFailed` if it failed."""
    page.wait_for_function("() => window.__webmcpTestCall !== undefined", timeout=timeout_ms)
    outcome = tool_call_outcome(page) or {}
    if "error" in outcome:
        raise ToolCallFailed(f"the tool call failed in the browser: {outcome['error']}")
    return parse_result(outcome.get("text"))


def call_tool(page: Any, name: str, tool_input: Any = None, *, timeout_ms: int = 10_000) -> Any:
    """Call `name` with `tool_input` (an object) as an agent does and return the parsed answer."""
    start_tool_call(page, name, {} if tool_input is None else tool_input)
    return finish_tool_call(page, timeout_ms)


def waits_for_person(page: Any, name: str) -> bool:
    """Whether a call of `name` completes only after the person presses the page's button (the manifest
    marks it `confirm: true`)."""
    return bool(page.evaluate(_WAITS_FOR_PERSON, name))


def pending_confirmation(page: Any) -> dict[str, Any] | None:
    """The button a started call waits on, `{"button": its text, "form": the tool or the form's id}`;
    None when nothing waits."""
    found = page.evaluate(_PENDING_CONFIRMATION)
    return dict(found) if found is not None else None


class WebMCPPage:
    """One Playwright page with the helpers above bound to it (what the `webmcp_page` fixture gives)."""

    def __init__(self, page: Any) -> None:
        self.page = page

    def open(self, url: str, *, expected: Iterable[str] | None = None, timeout_ms: int = 5_000) -> WebMCPPage:
        """Go to `url` and wait until its tools are registered (`wait_for_tools`)."""
        self.page.goto(url)
        wait_for_tools(self.page, expected, timeout_ms=timeout_ms)
        return self

    def tools(self) -> list[dict[str, Any]]:
        return list_tools(self.page)

    def tool_names(self) -> list[str]:
        return tool_names(self.page)

    def tool(self, name: str) -> dict[str, Any]:
        for tool in self.tools():
            if tool["name"] == name:
                return tool
        raise ToolCallFailed(f"no tool {name} on {self.page.url}")

    def call(self, name: str, tool_input: Any = None, *, timeout_ms: int = 10_000) -> Any:
        return call_tool(self.page, name, tool_input, timeout_ms=timeout_ms)

    def start(self, name: str, tool_input: Any = None) -> None:
        start_tool_call(self.page, name, {} if tool_input is None else tool_input)

    def finish(self, timeout_ms: int = 10_000) -> Any:
        return finish_tool_call(self.page, timeout_ms)

    def pending_confirmation(self) -> dict[str, Any] | None:
        return pending_confirmation(self.page)

    def confirm(self) -> None:
        """Press the button the pending call waits on, as the person would."""
        self.page.locator(PENDING_BUTTON).click()

    def wait_for_tools(
        self, expected: Iterable[str] | None = None, *, timeout_ms: int = 5_000
    ) -> list[dict[str, Any]]:
        return wait_for_tools(self.page, expected, timeout_ms=timeout_ms)
