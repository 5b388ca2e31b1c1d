"""The registry's tools over MCP (Streamable HTTP), on the official SDK's low-level `Server`.

One Django view serves `/mcp` under WSGI or ASGI: for each POST it builds a fresh, stateless SDK session
manager (JSON answers, no session ids), so any worker answers any request — clients of the 2026-07-28
era (stateless, `server/discover`) and of 2025-11-25 (the `initialize` handshake, kept by the SDK's
legacy path) alike. Tools are generated from the same declarations as the pages' WebMCP tools: names,
titles, descriptions and input schemas (a route-bound tool takes its parameter explicitly here).

The app gives one function, `call(McpCall) -> McpAnswer`, run in a thread with the Django request: the
use case and its envelope are the app's business; asking the person is this module's. A consequential
tool is never run silently: a client that declared form elicitation (2026-07-28) is asked through it
(the request state is sealed by the SDK, and inside it by us: bound to the caller, tool and arguments,
expiring, and spent by the one answer it carries, `seal_request_state`); any other client
gets a preview and a signed `confirmation` to send back (`confirmation_token`).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from asgiref.sync import sync_to_async
from django.core import signing
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.crypto import salted_hmac
from django.views.decorators.csrf import csrf_exempt
from mcp import MCPError
from mcp.server import CacheHint, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from . import scopes as scopes_module
from ._compat import login_not_required
from .annotations import mcp_annotations, mcp_meta
from .conf import setting
from .registry import ToolDeclaration, registry

#: The MCP server's name (its `serverInfo`, and the audience of its confirmations) when the project's
#: settings give none (`WEBMCP_SERVER_NAME`).
DEFAULT_SERVER_NAME = "webmcp"
CONFIRMATION_PARAM = "confirmation"
CONFIRMATION_MAX_AGE = 300  # seconds a preview's confirmation stays valid
ELICIT_KEY = "confirm"
TOOLS_TTL_MS = 60_000

#: Output every tool answers with: the use case's body on success, the error envelope on refusal
#: (`isError`); both carry `ok` and `stateVersion` (docs/agent-contract.md).
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean"},
        "code": {"type": "string", "description": "On refusals: the error code."},
        "reason": {"type": "string", "description": "On refusals: the finer cause."},
        "nextAction": {"type": "string"},
        "stateVersion": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    },
    "required": ["ok"],
}


@dataclass
class McpCall:
    """One `tools/call`, as the app's `call` function gets it."""

    declaration: ToolDeclaration
    arguments: dict[str, Any]
    request: HttpRequest
    #: False: describe what would happen (`McpAnswer.preview`), do not do it.
    confirmed: bool = True
    #: False: the caller gets a refusal of this module's own (declined, a stale confirmation), which
    #: only borrows this answer's stateVersion; what this answer refuses is not the call's outcome.
    final: bool = True


@dataclass(frozen=True)
class McpForm:
    """What a call still needs from the person, which a client with form elicitation can ask them:
    `schema`'s flat properties (MCP's primitive subset, in the person's words and language) are put
    into the call's `argument` object (e.g. `answers`), asked together with the confirmation."""

    argument: str
    message: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    confirm_title: str = "Yes, do it"


@dataclass
class McpAnswer:
    body: dict[str, Any]  # the API's body or the error envelope
    is_error: bool = False
    #: For a preview: one sentence the person confirms ("Register alice for …?").
    preview: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # e.g. WWW-Authenticate on the HTTP answer
    #: An HTTP status for the whole answer instead of 200: 401 (sign in first) or 403 (a token without
    #: the scope), which is what makes an MCP client start the person's sign-in; a tool error in a 200
    #: never does.
    status: int | None = None
    #: A refusal the person can lift by answering this form (asked when the client can elicit forms).
    form: McpForm | None = None


Caller = Callable[[McpCall], McpAnswer]
#: Who calls, and their state now (e.g. "user:7:v12"): a confirmation is bound to it, so it is spent as
#: soon as anything of theirs changes.
Principal = Callable[[HttpRequest], str]
#: The caller's token's scopes (None: no token). With WEBMCP_MCP_HIDE_OUT_OF_SCOPE on, `tools/list`
#: leaves out the tools these scopes do not allow and their calls are refused (`django_webmcp.scopes`).
Scopes = Callable[[HttpRequest], frozenset[str] | None]


@dataclass
class _Request:
    http: HttpRequest
    #: Who calls, asked only by a call that binds something to them (a consequential tool, a request
    #: state): for a signed-in caller it reads their state, a statement and a thread hop that every
    #: read, `tools/list` and `initialize` made for nothing (bench/profiles/README.md).
    identify: Principal
    principal: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # added to the HTTP answer
    status: int | None = None  # replaces the HTTP answer's status (McpAnswer.status)
    scopes: frozenset[str] | None = None  # the caller's token's scopes, when the view was given `scopes`
    scoped: bool = False  # whether tools are hidden and refused by scope on this request

    async def who(self) -> str:
        if self.principal is None:
            self.principal = await sync_to_async(self.identify)(self.http)
        return self.principal


_current: contextvars.ContextVar[_Request | None] = contextvars.ContextVar("webmcp_mcp_request", default=None)


def mcp_tool(declaration: ToolDeclaration) -> types.Tool:
    """The MCP description of a declared tool: the same words and schema as the browser gets."""
    meta: dict[str, Any] = {"securitySchemes": security_schemes(declaration), **mcp_meta(declaration)}
    return types.Tool(
        name=declaration.name,
        title=declaration.title or None,
        description=declaration.description,
        input_schema=mcp_input_schema(declaration),
        output_schema=mcp_output_schema(declaration),
        annotations=types.ToolAnnotations(**mcp_annotations(declaration)),
        _meta=meta,
    )


def mcp_output_schema(declaration: ToolDeclaration) -> dict[str, Any]:
    """The tool's own output schema (its output serializer) when it declares one, with the envelope's
    `ok` and `stateVersion`; else the envelope's (`OUTPUT_SCHEMA`)."""
    declared = declaration.output_schema()
    if declared is None:
        return OUTPUT_SCHEMA
    properties = dict(declared.get("properties", {}))
    for name, envelope in OUTPUT_SCHEMA["properties"].items():
        if not properties.get(name):  # absent, or `{}` (any value): the envelope says more
            properties[name] = envelope
    return {**declared, "type": "object", "properties": properties}


def security_schemes(declaration: ToolDeclaration) -> list[dict[str, Any]]:
    """Per tool, how a client must be signed in (`_meta.securitySchemes`, read by ChatGPT): `noauth`
    when anonymous calls work, `oauth2` with the scope a token needs."""
    oauth = {"type": "oauth2", "scopes": [declaration.auth_scope] if declaration.auth_scope else []}
    return [oauth] if declaration.auth_required else [{"type": "noauth"}, oauth]


def mcp_input_schema(declaration: ToolDeclaration) -> dict[str, Any]:
    """The full input (a route-bound parameter is explicit), plus `confirmation` on consequential tools."""
    schema: dict[str, Any] = json.loads(json.dumps(declaration.input_schema()))
    if declaration.consequential:
        schema.setdefault("properties", {})[CONFIRMATION_PARAM] = {
            "type": "string",
            "maxLength": 1000,
            "description": (
                "Leave out at first. Never your own words: only the `confirmation` value of an earlier "
                "CONFIRMATION_REQUIRED answer, sent again with the same arguments after the person agreed."
            ),
        }
    return schema


#: The descriptions of the registry's declarations, made once per process: the declarations do not
#: change while it serves, and making the nine descriptions took 1.4 ms, a third of a `tools/list`
#: (bench/profiles/README.md). Made again when the declarations are other objects (a test's registry).
_described: tuple[tuple[ToolDeclaration, ...], tuple[types.Tool, ...]] = ((), ())


def mcp_tools() -> list[types.Tool]:
    """Every declared tool, in the registry's (deterministic) order (`debugging` ones only when
    WEBMCP_MCP_DEBUGGING_TOOLS is on)."""
    global _described
    declarations = tuple(
        tool for tool in registry.tools() if not tool.debugging or setting("WEBMCP_MCP_DEBUGGING_TOOLS")
    )
    made, tools = _described
    if len(made) != len(declarations) or any(a is not b for a, b in zip(made, declarations, strict=True)):
        tools = tuple(mcp_tool(declaration) for declaration in declarations)
        _described = (declarations, tools)
    return list(tools)


# ── confirmation without elicitation: a signed, short-lived token ─────────────────────────────


def _digest(arguments: dict[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def confirmation_token(*, principal: str, tool: str, arguments: dict[str, Any]) -> str:
    """Bound to the caller, the tool and the exact arguments, including the caller's state now: once
    anything of theirs changes (the write itself does), the token is spent."""
    return signing.dumps(
        {"p": principal, "t": tool, "a": _digest(arguments)}, salt="webmcp.mcp.confirmation", compress=True
    )


def confirmation_matches(token: str, *, principal: str, tool: str, arguments: dict[str, Any]) -> bool:
    try:
        data = signing.loads(token, salt="webmcp.mcp.confirmation", max_age=CONFIRMATION_MAX_AGE)
    except signing.BadSignature:  # altered, or expired (SignatureExpired is a BadSignature)
        return False
    return bool(data == {"p": principal, "t": tool, "a": _digest(arguments)})


# ── confirmation by elicitation: the request state, sealed and spent once ─────────────────────

REQUEST_STATE_SALT = "webmcp.mcp.request-state"


def seal_request_state(
    *, principal: str, tool: str, arguments: dict[str, Any], carry: dict[str, Any] | None = None
) -> str:
    """The `requestState` sent with the question to the person: an HMAC (Django's signing, keyed with
    SECRET_KEY) over the caller, the tool, its exact arguments, an expiry and a one-time id. The
    person's answer counts only when it comes back with this state, unaltered, in time, and once.
    `carry` is what a form's next round needs (the argument it fills, what was typed so far), sealed
    with the rest and read back by `carried_state` once the state is spent."""
    expires = int(time.time()) + CONFIRMATION_MAX_AGE
    state = {"p": principal, "t": tool, "a": _digest(arguments), "e": expires, "n": secrets.token_urlsafe(16)}
    if carry:
        state["x"] = carry
    return signing.dumps(state, salt=REQUEST_STATE_SALT, compress=True)


def spend_request_state(
    state: str | None, *, principal: str, tool: str, arguments: dict[str, Any]
) -> dict[str, Any] | None:
    """None when `state` is one `seal_request_state` made for this very call and it was not spent yet
    (it is spent now); otherwise the refusal to answer. The spent ids are kept in Django's cache (shared
    by every worker when the cache is) until the state would have expired anyway."""
    if not isinstance(state, str) or not state:
        return REQUEST_STATE_MISSING
    try:
        data = signing.loads(state, salt=REQUEST_STATE_SALT, max_age=CONFIRMATION_MAX_AGE)
    except signing.SignatureExpired:
        return REQUEST_STATE_EXPIRED
    except signing.BadSignature:
        return REQUEST_STATE_INVALID
    if not isinstance(data, dict) or not isinstance(data.get("e"), int) or not isinstance(data.get("n"), str):
        return REQUEST_STATE_INVALID
    if data["e"] <= time.time():
        return REQUEST_STATE_EXPIRED
    spent = f"webmcp:mcp:spent:{data['n']}"
    if cache.get(spent):  # said first: once answered, the caller's state has usually moved on too
        return REQUEST_STATE_REUSED
    if (data.get("p"), data.get("t"), data.get("a")) != (principal, tool, _digest(arguments)):
        return REQUEST_STATE_INVALID
    if not cache.add(spent, True, CONFIRMATION_MAX_AGE + 60):  # two answers at once: one counts
        return REQUEST_STATE_REUSED
    return None


def carried_state(state: str | None) -> dict[str, Any]:
    """What `seal_request_state` carried in `state`; read only after `spend_request_state` accepted it."""
    try:
        data = signing.loads(state or "", salt=REQUEST_STATE_SALT, max_age=CONFIRMATION_MAX_AGE)
    except signing.BadSignature:
        return {}
    carried = data.get("x") if isinstance(data, dict) else None
    return carried if isinstance(carried, dict) else {}


# ── the SDK server ────────────────────────────────────────────────────────────────────────────


def _result(answer: McpAnswer) -> types.CallToolResult:
    body = answer.body
    text = body.get("message") or body.get("nextAction") or ("OK" if body.get("ok") else "Refused")
    summary = json.dumps(body, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=f"{text}\n{summary}" if text != summary else summary)],
        structured_content=body,
        is_error=answer.is_error,
    )


def build_server(call: Caller, *, resource_metadata: Callable[[], str] | None = None) -> Server:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        current = _current.get()
        if current is not None and current.scoped:
            names = {tool.name for tool in scopes_module.allowed(registry.tools(), current.scopes)}
            tools = [tool for tool in mcp_tools() if tool.name in names]
            return types.ListToolsResult(tools=tools, ttl_ms=TOOLS_TTL_MS, cache_scope="private")
        return types.ListToolsResult(tools=mcp_tools(), ttl_ms=TOOLS_TTL_MS, cache_scope="public")

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        declaration = registry.get(params.name)
        if declaration is None or (declaration.debugging and not setting("WEBMCP_MCP_DEBUGGING_TOOLS")):
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        current = _current.get()
        assert current is not None, "the MCP view sets the request"
        if current.scoped:
            metadata = resource_metadata() if resource_metadata is not None else ""
            out_of_scope = scopes_module.refusal(declaration, current.scopes, resource_metadata=metadata)
            if out_of_scope is not None:
                status, envelope, headers = out_of_scope
                current.status = status
                current.headers.update(headers)
                return _result(
                    McpAnswer({**envelope, "uiUpdated": False, "stateVersion": None}, is_error=True)
                )
        arguments = dict(params.arguments or {})
        state: dict[str, Any] = {}  # a form's round: the argument it fills, what the person typed so far

        async def run(*, confirmed: bool = True, final: bool = True) -> McpAnswer:
            given = _with_collected(arguments, state)
            answer = await sync_to_async(call)(McpCall(declaration, given, current.http, confirmed, final))
            current.headers.update(answer.headers)
            if answer.status is not None:
                current.status = answer.status
            return answer

        if not declaration.consequential:
            return _result(await run())
        confirmation = arguments.pop(CONFIRMATION_PARAM, None)
        answers = params.input_responses or {}
        who = await current.who()
        elicitation = ctx.session.client_capabilities and ctx.session.client_capabilities.elicitation
        can_ask = bool(elicitation) and getattr(elicitation, "form", None) is not None
        if ELICIT_KEY in answers:  # the person answered the question we asked, if the state says so
            refused = spend_request_state(
                params.request_state, principal=who, tool=declaration.name, arguments=arguments
            )
            if refused is not None:
                return _refusal(refused, await run(confirmed=False, final=False))
            state = carried_state(params.request_state)
            reply = answers[ELICIT_KEY]
            if isinstance(reply, types.ElicitResult) and reply.action == "accept":
                content = reply.content if isinstance(reply.content, dict) else {}
                if content.get(ELICIT_KEY) is True:
                    if state.get("argument"):  # what they typed goes into the call, then it is asked again
                        typed = _collect(state, content)
                        if (
                            typed == state
                        ):  # nothing typed: no second round; the refusal lists what is missing
                            return _result(await run(confirmed=False))
                        state = typed
                        preview = await run(confirmed=False)
                        if preview.form is not None and can_ask:
                            return _ask_form(
                                declaration.name, preview.form, state, who=who, arguments=arguments
                            )
                        if preview.is_error:
                            return _result(preview)
                    return _result(await run())
            return _refusal(DECLINED, await run(confirmed=False, final=False))
        if isinstance(confirmation, str) and confirmation:
            if confirmation_matches(confirmation, principal=who, tool=declaration.name, arguments=arguments):
                return _result(await run())
            if not can_ask:
                return _refusal(STALE_CONFIRMATION, await run(confirmed=False, final=False))
            # A client that can ask the person gets the question instead of a refusal: a model that
            # filled the parameter with text of its own would otherwise repeat the call until its step
            # limit, and asking the person is what a fresh preview would lead to anyway.
        preview = await run(confirmed=False)
        if preview.form is not None and can_ask:
            first_round = {"argument": preview.form.argument, "collected": {}}
            return _ask_form(declaration.name, preview.form, first_round, who=who, arguments=arguments)
        if preview.is_error or not preview.preview:
            return _result(preview)
        if can_ask:
            question = types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message=preview.preview,
                    requested_schema={
                        "type": "object",
                        "properties": {ELICIT_KEY: {"type": "boolean", "title": "Yes, do it"}},
                        "required": [ELICIT_KEY],
                    },
                )
            )
            sealed = seal_request_state(principal=who, tool=declaration.name, arguments=arguments)
            return types.InputRequiredResult(input_requests={ELICIT_KEY: question}, request_state=sealed)
        token = confirmation_token(principal=who, tool=declaration.name, arguments=arguments)
        extra = {"preview": preview.preview, CONFIRMATION_PARAM: token}
        return _refusal({**CONFIRMATION_NEEDED, **extra}, preview)

    name = server_name()
    server = Server(
        name,
        version=str(setting("WEBMCP_SERVER_VERSION")),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=lambda name: (
            mcp_input_schema(found) if (found := registry.get(name)) is not None else None
        ),
        cache_hints={"tools/list": CacheHint(ttl_ms=TOOLS_TTL_MS, scope="public")},
    )
    keys = [salted_hmac("webmcp.mcp.request-state", "key", algorithm="sha256").digest()]
    server.middleware.append(
        RequestStateBoundary(
            # The SDK's envelope outlives ours a little, so an expired state gets our own refusal.
            RequestStateSecurity(keys=keys, ttl=CONFIRMATION_MAX_AGE + 60, bind_principal=_bound_principal),
            default_audience=name,
        )
    )
    return server


def server_name() -> str:
    """The project's name for its MCP server (`WEBMCP_SERVER_NAME`)."""
    return str(setting("WEBMCP_SERVER_NAME") or DEFAULT_SERVER_NAME)


def _collect(state: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    typed = {key: value for key, value in content.items() if key != ELICIT_KEY}
    return {**state, "collected": {**(state.get("collected") or {}), **typed}}


def _with_collected(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments with what the person typed put into the form's argument object."""
    argument, collected = state.get("argument"), state.get("collected")
    if not isinstance(argument, str) or not isinstance(collected, dict) or not collected:
        return arguments
    given = arguments.get(argument)
    return {**arguments, argument: {**(given if isinstance(given, dict) else {}), **collected}}


def _ask_form(
    tool: str, form: McpForm, state: dict[str, Any], *, who: str, arguments: dict[str, Any]
) -> types.InputRequiredResult:
    """Ask the person the form and the confirmation in one go (a flat object of primitives)."""
    properties = {**form.properties, ELICIT_KEY: {"type": "boolean", "title": form.confirm_title}}
    question = types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=form.message,
            requested_schema={
                "type": "object",
                "properties": properties,
                "required": [*form.required, ELICIT_KEY],
            },
        )
    )
    round_state = {"argument": form.argument, "collected": state.get("collected") or {}}
    sealed = seal_request_state(principal=who, tool=tool, arguments=arguments, carry=round_state)
    return types.InputRequiredResult(input_requests={ELICIT_KEY: question}, request_state=sealed)


def _bound_principal(ctx: Any) -> str:
    current = _current.get()
    if current is None:
        return ""
    if current.principal is None:  # asked before anything read it: the SDK refuses (fails closed)
        raise RuntimeError("the caller was not identified before their request state was bound")
    return current.principal


def _refusal(envelope: dict[str, Any], preview: McpAnswer) -> types.CallToolResult:
    """One of this module's envelopes, with the caller's stateVersion as the preview read it."""
    state = preview.body.get("stateVersion")
    return _result(McpAnswer({**envelope, "uiUpdated": False, "stateVersion": state}, is_error=True))


DECLINED = {
    "ok": False,
    "code": "USER_CANCELLED",
    "reason": "PERSON_DECLINED",
    "message": "The person declined; nothing was done.",
    "nextAction": "Stop; do not call the tool again unless the person asks.",
    "retryable": False,
}
STALE_CONFIRMATION = {
    "ok": False,
    "code": "INVALID_INPUT",
    "reason": "CONFIRMATION_INVALID",
    "message": "This confirmation is expired, altered, spent, or for other arguments; nothing was done.",
    "nextAction": "Call the tool again without confirmation for a fresh preview, and ask the person again.",
    "retryable": False,
}
REQUEST_STATE_MISSING = {
    **STALE_CONFIRMATION,
    "reason": "REQUEST_STATE_MISSING",
    "message": "The person's answer came without the request state it was asked with; nothing was done.",
}
REQUEST_STATE_INVALID = {
    **STALE_CONFIRMATION,
    "reason": "REQUEST_STATE_INVALID",
    "message": "The request state was altered, or is for another call or caller; nothing was done.",
}
REQUEST_STATE_EXPIRED = {
    **STALE_CONFIRMATION,
    "reason": "REQUEST_STATE_EXPIRED",
    "message": "The person's answer came after the question expired (5 minutes); nothing was done.",
}
REQUEST_STATE_REUSED = {
    **STALE_CONFIRMATION,
    "reason": "REQUEST_STATE_REUSED",
    "message": "This request state was already answered once; nothing more was done.",
}
CONFIRMATION_NEEDED = {
    "ok": False,
    "code": "CONFIRMATION_REQUIRED",
    "reason": "PERSON_MUST_CONFIRM",
    "message": "Nothing was done yet: the person must agree first.",
    "nextAction": (
        "Show the person the preview. Only if they agree, call the same tool again with the same "
        "arguments and this confirmation (valid 5 minutes)."
    ),
    "retryable": False,
}

#: Every refusal of this module's own (docs/agent-contract.md lists each; a test keeps it so).
REFUSALS = (
    DECLINED,
    STALE_CONFIRMATION,
    REQUEST_STATE_MISSING,
    REQUEST_STATE_INVALID,
    REQUEST_STATE_EXPIRED,
    REQUEST_STATE_REUSED,
    CONFIRMATION_NEEDED,
)


# ── the view ──────────────────────────────────────────────────────────────────────────────────


def mcp_view(
    *,
    call: Caller,
    principal: Principal,
    allowed_origins: Callable[[], set[str]],
    scopes: Scopes | None = None,
    resource_metadata: Callable[[], str] | None = None,
) -> Callable[[HttpRequest], Awaitable[HttpResponse]]:
    """The Django view serving `/mcp`: POST only, Origin checked (403), Host by ALLOWED_HOSTS.

    `scopes` (with WEBMCP_MCP_HIDE_OUT_OF_SCOPE on) hides and refuses tools by the caller's scopes;
    `resource_metadata` gives the URL of the RFC 9728 document the refusals' challenges point to.
    The view is exempt from CSRF (callers send a bearer token, not a cookie) and from
    `LoginRequiredMiddleware` (`login_not_required`).
    """
    server = build_server(call, resource_metadata=resource_metadata)
    # Django has checked the Host; the Origin is checked below with the site's own list.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)

    @login_not_required
    @csrf_exempt
    async def view(request: HttpRequest) -> HttpResponse:
        origin = request.headers.get("Origin")
        if origin and origin not in allowed_origins():
            return HttpResponse("Invalid Origin header", status=403, content_type="text/plain")
        if request.method != "POST":
            return HttpResponse(status=405, headers={"Allow": "POST"})
        status: list[int] = []
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []
        body = request.body
        delivered = False

        async def receive() -> dict[str, Any]:
            # The body once; after that the client is simply there (a stream the SDK may wait on ends
            # when its answer does), never a busy loop of the same body.
            nonlocal delivered
            if delivered:
                await anyio.sleep_forever()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                headers.extend(message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        manager = StreamableHTTPSessionManager(
            app=server, stateless=True, json_response=True, security_settings=security
        )
        current = _Request(request, principal)
        if scopes is not None and setting("WEBMCP_MCP_HIDE_OUT_OF_SCOPE"):
            current.scoped, current.scopes = True, scopes(request)
        if b'"requestState"' in body:  # unsealed, and bound to the caller, before the tool runs
            await current.who()
        token = _current.set(current)
        try:
            async with manager.run():
                await manager.handle_request(_scope(request), receive, send)
        finally:
            _current.reset(token)
        response = HttpResponse(b"".join(chunks), status=current.status or (status[0] if status else 500))
        for raw_name, raw_value in headers:
            if raw_name.lower() != b"content-length":
                response[raw_name.decode("latin-1")] = raw_value.decode("latin-1")
        for name, value in current.headers.items():
            response[name] = value
        return response

    return view


def _scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI scope of a Django request, for the SDK's transport."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()],
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.META.get("SERVER_NAME", ""), _port(request.META.get("SERVER_PORT"))),
        "state": {},
    }


def _port(value: Any) -> int:
    """SERVER_PORT as a number: an in-process ASGI client may give none ("None" once made text)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
