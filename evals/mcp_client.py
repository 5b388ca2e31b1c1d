"""A case played over MCP (`--via mcp`): the site's tools at `<site>/mcp`, through the official SDK client.

No browser. `McpCasePage` stands where `browser.CasePage` stands in the runner and the agent loop — the
same `setup_log`, `history`, `tools()`, `call()`, `context_text()` — so setup, replay, smoke calls, the
model loop and the grader are shared; only the transport differs:

- One SDK `Client` per case, protocol mode `2026-07-28`, with an elicitation callback; anonymous, or with
  the case's personal access token (`Authorization: Bearer …`, see `mcp_accounts.py`). The client lives
  in an event loop on its own thread, since the runner is synchronous.
- Tools are what `tools/list` answers. Over MCP a tool about one event takes `event_id` explicitly, where
  a detail page's route-bound tool takes `{}`: for the calls the runner makes (smoke calls, `before`
  calls, replayed earlier turns) on a case whose route is `/events/<id>/`, the page's event id is added
  to a call that lacks it, and the record says so (`routeBound`). A model's calls are sent as the model
  made them (`route_binding = False`): giving the id is the model's job.
- A consequential tool (`register_event`, `cancel_registration`) is confirmed by elicitation; the runner
  accepts (the person presses yes), and the record says `"confirmedByRunner": true` with the question.
- A result is the tool's `structuredContent` (the same JSON body as over WebMCP, with `uiUpdated: false`
  since there is no page), and `isError`.
- What the person sees (the model's system prompt) is the case's page fetched over plain HTTP in the
  case's language: its URL, title and the text of its `<main>`, anonymously.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import re
import threading
import time
import urllib.request
from html.parser import HTMLParser
from typing import Any

from .browser import PAGE_TEXT_LIMIT, CallRecord

MCP_MODE = "2026-07-28"
MCP_PATH = "/mcp"
CALL_TIMEOUT_S = 60.0
CONNECT_TIMEOUT_S = 30.0
ROUTE_EVENT = re.compile(r"^/events/(evt-[a-z0-9]+(?:-[a-z0-9]+)*)/")
ROUTE_PARAM = "event_id"


class McpSetupError(RuntimeError):
    """The MCP client could not be started or the case cannot be set up over MCP."""


def sdk_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp")
    except PackageNotFoundError:
        return "unknown"


def accept_language(locale: str) -> str:
    return f"{locale},{locale.split('-')[0]};q=0.9" if "-" in locale else locale


def route_event_id(route: str) -> str | None:
    """The event a detail page is about (`/events/<id>/`), else None."""
    found = ROUTE_EVENT.match(route)
    return found.group(1) if found else None


def _challenge_reader(inner: Any) -> Any:
    """A `_ChallengeReader` that is an httpx2 transport (httpx2 is imported only when MCP is used)."""
    import httpx2

    class Reader(_ChallengeReader, httpx2.AsyncBaseTransport):
        pass

    return Reader(inner)


class _ChallengeReader:
    """An HTTP transport for the SDK that reads a sign-in challenge instead of failing on it.

    `/mcp` answers a call that needs the person with HTTP 401 (403 for a token without the scope) and
    the envelope in the body: a client with OAuth would start the person's sign-in there. The runner
    has no person to sign in, so it is a client that reads the body: the answer reaches the SDK as a
    200 with that body, and the status and challenge are kept for the record."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.challenges: list[dict[str, Any]] = []

    async def handle_async_request(self, request: Any) -> Any:
        import httpx2

        response = await self.inner.handle_async_request(request)
        if response.status_code not in (401, 403):
            return response
        await response.aread()
        self.challenges.append(
            {
                "httpStatus": response.status_code,
                "wwwAuthenticate": response.headers.get("WWW-Authenticate", ""),
            }
        )
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx2.Response(200, headers=headers, content=response.content, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Connection:
    """The SDK client, open for one case, held by one task of an event loop on a thread of its own; calls
    are submitted to that loop and waited for (the SDK's task groups must be left by the task that
    entered them, so the client stays with its owner task)."""

    def __init__(self, url: str, headers: dict[str, str], elicitation: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="evals-mcp", daemon=True)
        self.thread.start()
        self.client: Any = None
        self.challenges: list[dict[str, Any]] = []
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task | None = None
        try:
            self.run(self._open(url, headers, elicitation), CONNECT_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    def run(self, coroutine: Any, timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer from MCP within {timeout:.0f} s") from None

    async def _open(self, url: str, headers: dict[str, str], elicitation: Any) -> None:
        ready = self.loop.create_future()
        self._stop = asyncio.Event()
        self._owner = asyncio.ensure_future(self._hold(url, headers, elicitation, ready))
        await ready

    async def _hold(self, url: str, headers: dict[str, str], elicitation: Any, ready: asyncio.Future) -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        try:
            reader = _challenge_reader(httpx2.AsyncHTTPTransport())
            self.challenges = reader.challenges
            http = httpx2.AsyncClient(
                headers=headers,
                timeout=httpx2.Timeout(30, read=120),
                transport=reader,  # type: ignore[arg-type]
            )
            transport = streamable_http_client(url, http_client=http)
            async with http, Client(transport, mode=MCP_MODE, elicitation_callback=elicitation) as client:
                self.client = client
                ready.set_result(None)
                assert self._stop is not None
                await self._stop.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            elif not isinstance(error, asyncio.CancelledError):
                raise

    async def _close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._owner is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._owner, 10)

    def close(self) -> None:
        if self.loop.is_running():
            with contextlib.suppress(Exception):
                self.run(self._close(), 15)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        if not self.thread.is_alive():
            self.loop.close()


class McpCasePage:
    """One case over MCP: its setup log, its earlier turns, the site's MCP tools listed and called."""

    via = "mcp"

    def __init__(
        self,
        base_url: str,
        route: str,
        locale: str = "en-US",
        account: dict | None = None,
        account_reason: str = "",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.route = route
        self.locale = locale
        self.url = self.base_url + MCP_PATH
        self.event_id = route_event_id(route)
        self.account = account
        self.route_binding = True  # the runner's own calls; False while a model plays (runner.run_case)
        self.history: list[dict] = []
        self.setup_log: dict = {
            "url": self.base_url + route,
            "mcp": {"url": self.url, "mode": MCP_MODE, "token": bool(account)},
        }
        if account:
            self.setup_log["signedIn"] = {
                "username": account["username"],
                "via": "manage.py create_access_token (Bearer token)",
                "scopes": account.get("scopes"),
                "why": account_reason,
            }
        self._asked: list[dict] = []
        self._tools: list[dict] | None = None
        self._page_text: dict | None = None
        headers = {"Accept-Language": accept_language(locale)}
        if account:
            headers["Authorization"] = f"Bearer {account['token']}"
        try:
            self.connection = _Connection(self.url, headers, self._answer_elicitation)
        except Exception as error:
            raise McpSetupError(f"cannot connect to {self.url}: {type(error).__name__}: {error}") from error

    def close(self) -> None:
        self.connection.close()

    # ---- the person, when the site asks ----------------------------------------------------------

    async def _answer_elicitation(self, context: Any, params: Any) -> Any:
        """The runner's press of the button: accept, answering yes to every yes/no the form asks. A form
        asking for anything else is declined (the runner makes nothing up for the person)."""
        import mcp.types as types

        schema = getattr(params, "requested_schema", None) or {}
        properties = schema.get("properties") or {}
        asked = {"message": getattr(params, "message", ""), "requestedSchema": schema}
        others = [key for key, spec in properties.items() if (spec or {}).get("type") != "boolean"]
        if others or not properties:
            self._asked.append({**asked, "by": "runner declined (the form asks more than yes or no)"})
            return types.ElicitResult(action="decline")
        self._asked.append({**asked, "by": "runner accepted the elicitation"})
        return types.ElicitResult(action="accept", content=dict.fromkeys(properties, True))

    # ---- setup steps, as the runner's `prepare` asks for them --------------------------------------

    def sign_up(self) -> str:
        """Over MCP the case's account exists already (a token made for it before the run)."""
        if not self.account:
            raise McpSetupError("this case is signed in, but no account with a token was made for it")
        return self.account["username"]

    def open(self) -> None:
        """Nothing to open: there is no page. The tools must be listed."""
        self.setup_log["tools"] = self.wait_for_tools()

    def wait_for_tools(self, timeout_ms: int = 0) -> list[str]:
        return sorted(tool["name"] for tool in self.tools(refresh=True))

    def block(self, url: str, times: int | None = None) -> None:
        raise McpSetupError("blockApi aborts the browser's requests; over MCP it is not applicable")

    # ---- tools -----------------------------------------------------------------------------------

    def tools(self, refresh: bool = False) -> list[dict]:
        """`tools/list`, as dicts shaped like the page's tools: name, description, inputSchema,
        annotations (MCP's hints)."""
        if self._tools is None or refresh:
            listed = self.connection.run(self.connection.client.list_tools(), CALL_TIMEOUT_S)
            self._tools = [
                {
                    "name": tool.name,
                    "title": tool.title,
                    "description": tool.description or "",
                    "inputSchema": tool.input_schema,
                    "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True)
                    if tool.annotations
                    else {},
                }
                for tool in listed.tools
            ]
        return self._tools

    def bound_arguments(self, tool: dict, args: Any) -> Any:
        """`args` with the page's event id added where the case calls a route-bound tool with `{}`."""
        if not self.route_binding or not self.event_id or not isinstance(args, dict) or ROUTE_PARAM in args:
            return args
        if ROUTE_PARAM not in ((tool.get("inputSchema") or {}).get("properties") or {}):
            return args
        return {**args, ROUTE_PARAM: self.event_id}

    def call(self, name: str, args: Any, *, confirm: bool = True) -> CallRecord:
        """Call a tool as the agent; never raises (a failed call is recorded)."""
        started = time.monotonic()
        record = CallRecord(name, args)
        try:
            tools = {tool["name"]: tool for tool in self.tools()}
            tool = tools.get(name)
            if tool is None:
                record.error = f"No tool named {name!r} over MCP; its tools are {sorted(tools)}."
            else:
                sent = self.bound_arguments(tool, args)
                if sent is not args:
                    record.args = sent
                    record.extra["routeBound"] = {ROUTE_PARAM: self.event_id, "caseArgs": args}
                self._asked = []
                seen = len(self.connection.challenges)
                result = self.connection.run(self.connection.client.call_tool(name, sent), CALL_TIMEOUT_S)
                record.result = result_body(result)
                record.extra["isError"] = bool(result.is_error)
                if len(self.connection.challenges) > seen:  # the sign-in challenge a person would answer
                    record.extra.update(self.connection.challenges[-1])
                if self._asked:
                    accepted = [ask for ask in self._asked if ask["by"].startswith("runner accepted")]
                    record.confirmedByRunner = bool(accepted)
                    record.confirmation = (accepted or self._asked)[0]
                    if not confirm:
                        record.extra["note"] = "confirm=False has no effect over MCP"
        except Exception as error:  # a failed call is recorded, never raised
            record.error = f"{type(error).__name__}: {error}".splitlines()[0]
        record.ms = round((time.monotonic() - started) * 1000)
        return record

    # ---- what the person sees --------------------------------------------------------------------

    def context_text(self) -> dict:
        """URL, title and the text of the page's `<main>` (its HTML over plain HTTP, anonymously, in the
        case's language), for the model's system prompt."""
        if self._page_text is None:
            url = self.base_url + self.route
            request = urllib.request.Request(
                url, headers={"Accept-Language": accept_language(self.locale), "Accept": "text/html"}
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                html = response.read().decode(response.headers.get_content_charset() or "utf-8", "replace")
            title, text = page_text(html)
            self._page_text = {"url": url, "title": title, "text": text[:PAGE_TEXT_LIMIT]}
        return self._page_text


def result_body(result: Any) -> Any:
    """The JSON body of a `CallToolResult`: its structuredContent, else the JSON in its text."""
    if result.structured_content is not None:
        return result.structured_content
    texts = [block.text for block in result.content or [] if getattr(block, "type", "") == "text"]
    for text in texts:
        for candidate in (text, text.split("\n", 1)[-1]):
            with contextlib.suppress(ValueError):
                return json.loads(candidate)
    return {"content": texts}


class _TextOfMain(HTMLParser):
    """Title and `<main>`'s text (the body's when there is no main), one line per block, without
    scripts, styles, templates or hidden elements."""

    SKIP = {"script", "style", "template", "noscript", "svg", "head"}
    BLOCKS = {
        "p", "div", "section", "article", "header", "footer", "nav", "li", "ul", "ol", "dl", "dt", "dd",
        "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr", "table", "form", "fieldset", "label", "button",
        "main", "aside", "figure", "figcaption", "details", "summary", "option", "select",
    }  # fmt: skip
    VOID = {"br", "img", "input", "meta", "link", "hr", "source", "wbr", "area", "base", "col", "embed"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: list[str] = []
        self.main: list[str] = []
        self.body: list[str] = []
        self._stack: list[tuple[str, bool]] = []  # (tag, hidden or skipped)
        self._in_title = False
        self._main_depth = 0

    def _hidden(self) -> bool:
        return any(hidden for _, hidden in self._stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "title":
            self._in_title = True
        if tag in self.BLOCKS:
            self._emit("\n")
        if tag in self.VOID:
            return
        hidden = tag in self.SKIP or "hidden" in names or names.get("aria-hidden") == "true"
        self._stack.append((tag, hidden))
        if tag == "main":
            self._main_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self.BLOCKS:
            self._emit("\n")
        for position in range(len(self._stack) - 1, -1, -1):
            if self._stack[position][0] == tag:
                if tag == "main":
                    self._main_depth -= 1
                del self._stack[position:]
                break

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
            return
        if not self._hidden():
            self._emit(re.sub(r"\s+", " ", data))  # as rendered: whitespace in text is one space

    def _emit(self, text: str) -> None:
        self.body.append(text)
        if self._main_depth > 0:
            self.main.append(text)


def page_text(html: str) -> tuple[str, str]:
    parser = _TextOfMain()
    parser.feed(html)
    parser.close()
    raw = "".join(parser.main or parser.body)
    lines = [" ".join(line.split()) for line in raw.splitlines()]
    return " ".join("".join(parser.title).split()), "\n".join(line for line in lines if line)
