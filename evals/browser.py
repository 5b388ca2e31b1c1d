"""Chromium with WebMCP, driven by Playwright: open a case's page, prepare it, list and call its tools.

Chromium is started, and the page's tools listed, waited for and called, by the one harness (`harness/`:
WebMCP on, loopback only). Each case gets a fresh browser context (no cookies), so cases cannot see each
other's saves or sign-ins.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from harness import tools as harness_tools

from .seats import EVAL_ACCOUNT_PREFIX

CALL_TIMEOUT_MS = 15_000
PAGE_TEXT_LIMIT = 4_000


class BrowserError(RuntimeError):
    """The page could not be prepared as the case says."""


@dataclass
class CallRecord:
    functionName: str
    args: Any
    result: Any = None
    error: str | None = None
    confirmedByRunner: bool = False
    confirmation: dict | None = None
    ms: int = 0
    toolsAfter: list[str] = field(default_factory=list)
    #: What only one path knows (over MCP: `isError`, and `routeBound` when the runner added the page's
    #: event id to a call the case writes as `{}`); merged into the trace's record.
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        data = {
            "functionName": self.functionName,
            "args": self.args,
            "result": self.result,
            "ms": self.ms,
            "toolsAfter": self.toolsAfter,
        }
        if self.error:
            data["error"] = self.error
        if self.confirmedByRunner:
            data["confirmedByRunner"] = True
            data["confirmation"] = self.confirmation
        data.update(self.extra)
        return data


class CasePage:
    """A case's page in its own context: setup applied, tools listed and called as an agent would."""

    def __init__(self, browser, base_url: str, route: str, locale: str = "en-US") -> None:
        self.base_url = base_url.rstrip("/")
        self.route = route
        self.context = browser.new_context(
            base_url=self.base_url, locale=locale, viewport={"width": 1280, "height": 900}
        )
        self.context.set_default_timeout(CALL_TIMEOUT_MS)
        self.page = self.context.new_page()
        self.setup_log: dict = {}
        self.history: list[dict] = []  # the earlier turns' calls, replayed (runner.replay_history)

    def close(self) -> None:
        self.context.close()

    # ---- setup -----------------------------------------------------------------------------------

    def sign_up(self) -> str:
        """Create and sign in a fresh account through the sign-up page, as a person would."""
        username = f"{EVAL_ACCOUNT_PREFIX}{secrets.token_hex(4)}"
        password = f"Ev-{secrets.token_urlsafe(12)}"
        page = self.page
        page.goto("/accounts/signup/")
        page.fill("[name=username]", username)
        page.fill("[name=email]", f"{username}@example.com")
        page.fill("[name=password1]", password)
        page.fill("[name=password2]", password)
        with page.expect_navigation():
            page.locator("form[action*='signup'] button[type=submit]").click()
        if "/accounts/signup/" in page.url:
            raise BrowserError("sign-up did not complete (the form came back)")
        self.setup_log["signedIn"] = {"username": username, "via": "/accounts/signup/"}
        return username

    def open(self) -> None:
        self.page.goto(self.route)
        self.setup_log["url"] = self.page.url
        self.wait_for_tools()

    def block(self, url: str, times: int | None = None) -> None:
        """Abort matching requests from now on (the page itself is already loaded)."""
        self.page.route(url, lambda route: route.abort(), times=times)
        self.setup_log.setdefault("blocked", []).append({"url": url, "times": times})

    # ---- tools -----------------------------------------------------------------------------------

    def tools(self) -> list[dict]:
        return harness_tools.tools(self.page)

    def wait_for_tools(self, timeout_ms: int = 5_000) -> list[str]:
        """Until the registered tools equal the page's manifest (form tools appear a task late, and
        tools follow a write's re-render); without a manifest, until the list holds still. A mismatch
        is noted in the setup log, never raised."""
        try:
            listed = harness_tools.wait_for_tools(self.page, timeout_ms=timeout_ms, poll_ms=60)
        except harness_tools.ToolsMismatch as mismatch:
            self.setup_log.setdefault("warnings", []).append(
                f"tools on {mismatch.url} were {mismatch.names}, the manifest says {mismatch.expected}"
            )
            return mismatch.names
        return sorted(tool["name"] for tool in listed)

    def call(self, name: str, args: Any, *, confirm: bool = True) -> CallRecord:
        """Call a tool as the agent; a call that waits for a person's confirmation is confirmed by
        clicking the focused submit button (and the record says so)."""
        started = time.monotonic()
        record = CallRecord(name, args)
        try:
            tools = {tool["name"]: tool for tool in self.tools()}
            tool = tools.get(name)
            if tool is None:
                record.error = f"No tool named {name!r} on this page; its tools are {sorted(tools)}."
            elif (tool.get("annotations") or {}).get("consequential") or harness_tools.waits_for_person(
                self.page, name
            ):
                self._call_with_confirmation(record, confirm)
            else:
                record.result = self.page.webmcp.call_tool(name, args, timeout=CALL_TIMEOUT_MS)
        except Exception as error:  # a failed call is recorded, never raised
            record.error = f"{type(error).__name__}: {error}".splitlines()[0]
        record.ms = round((time.monotonic() - started) * 1000)
        try:
            record.toolsAfter = self.wait_for_tools(timeout_ms=3_000)
        except Exception:  # the page may have navigated away
            record.toolsAfter = []
        return record

    def _call_with_confirmation(self, record: CallRecord, confirm: bool) -> None:
        page = self.page
        harness_tools.start_tool_call(page, record.functionName, record.args)
        deadline = time.monotonic() + CALL_TIMEOUT_MS / 1000
        while time.monotonic() < deadline:
            outcome = harness_tools.tool_call_outcome(page)
            if outcome is not None:
                if "error" in outcome:
                    record.error = outcome["error"]
                else:
                    record.result = harness_tools.parse_result(outcome["text"])
                return
            waiting = harness_tools.pending_confirmation(page)
            if waiting and not record.confirmedByRunner:
                if not confirm:
                    record.error = "the call waits for a person's confirmation, which this run does not give"
                    return
                page.locator(harness_tools.PENDING_BUTTON).click()
                record.confirmedByRunner = True
                record.confirmation = {**waiting, "by": "runner click"}
            page.wait_for_timeout(50)
        record.error = f"no answer within {CALL_TIMEOUT_MS} ms"

    # ---- what an agent sees ----------------------------------------------------------------------

    def context_text(self) -> dict:
        """URL, title and the visible text of the main region, for the model's system prompt."""
        page = self.page
        text = page.evaluate("() => (document.querySelector('main') || document.body).innerText || ''")
        text = "\n".join(line.strip() for line in text.splitlines() if line.strip())
        return {"url": page.url, "title": page.title(), "text": text[:PAGE_TEXT_LIMIT]}
