"""The registry's tools over MCP (Streamable HTTP), on the official SDK's low-level `Server`.

One Django view serves `/mcp` under WSGI or ASGI: for each POST it builds a fresh, stateless SDK session
manager (JSON answers, no session ids), so any worker answers any request — clients of the 2026-07-28
era (stateless, `server/discover`) and of 2025-11-25 (the `initialize` handshake, kept by the SDK's
legacy path) alike. Tools are generated from the same declarations as the pages' WebMCP tools: names,
titles, descriptions and input schemas (a route-bound tool takes its parameter explicitly here).

The app gives one function, `call(McpCall) -> McpAnswer`, run on the request's own thread (`_blocking`):
the use case and its envelope are the app's business; asking the person is this module's. A consequential
tool is never run silently: a client that declared form elicitation (2026-07-28) is asked through it
(the request state is sealed by the SDK, and inside it by us: bound to the caller, tool and arguments,
expiring, and spent by the one answer it carries, `seal_request_state`); any other client
gets a preview and a signed `confirmation` to send back (`confirmation_token`).
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import secrets
import threading
import time
import weakref
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from django.core import signing
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.urls.converters import IntConverter, UUIDConverter
from django.utils.crypto import salted_hmac
from django.views.decorators.csrf import csrf_exempt
from mcp import MCPError
from mcp.server import CacheHint, Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import UrlElicitationRequiredError

from . import scopes as scopes_module
from ._compat import login_not_required
from .annotations import mcp_annotations, mcp_meta
from .conf import setting
from .registry import ToolDeclaration, registry
from .routing import url_converters

#: The MCP server's name (its `serverInfo`, and the audience of its confirmations) when the project's
#: settings give none (`WEBMCP_SERVER_NAME`).
DEFAULT_SERVER_NAME = "webmcp"
CONFIRMATION_PARAM = "confirmation"
CONFIRMATION_MAX_AGE = 300  # seconds a preview's confirmation stays valid
ELICIT_KEY = "confirm"
#: The input request of a page the person opens (URL mode), answered by the client's retry.
URL_KEY = "open_page"
#: The first protocol revision whose clients are asked through an input-required result.
INPUT_REQUIRED_VERSION = "2026-07-28"
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


@dataclass(frozen=True)
class McpUrl:
    """A page the person must open themselves (MCP's URL-mode elicitation): the client shows them the
    address and opens it where neither the client nor the model reads it. The address carries nothing
    personal and no credential; the page checks who opens it (their own sign-in)."""

    url: str
    message: str


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
    #: A result the person finishes on a page of their own (paying): a client with URL-mode elicitation
    #: is asked to open it (2026-07-28: an input-required result; 2025-11-25: error -32042); any other
    #: client has the address in the result.
    url: McpUrl | None = None


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
    #: Who the caller is without their state (what the SDK's own envelope of a request state binds):
    #: from the principal, e.g. "user:7:v12" → "user:7". A round that changes the caller's state (a
    #: registration, then the page the person opens to pay) stays bound to the same person.
    identity_of: Callable[[str], str]
    principal: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # added to the HTTP answer
    status: int | None = None  # replaces the HTTP answer's status (McpAnswer.status)
    scopes: frozenset[str] | None = None  # the caller's token's scopes, when the view was given `scopes`
    scoped: bool = False  # whether tools are hidden and refused by scope on this request

    def who(self) -> str:
        if self.principal is None:
            self.principal = _blocking(self.identify, self.http)
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
    properties and its one required key, `ok` (every answer carries it); else the envelope's
    (`OUTPUT_SCHEMA`). The envelope's keys keep the envelope's types (a declared description stays):
    a refusal carries them too (`ok: false`, a `stateVersion` that may be null), and the TypeScript
    SDK's client (the MCP Inspector's, 1.32) validates every `structuredContent` against the schema,
    an `isError` result's included, so a narrower declared type made it reject the refusal itself."""
    declared = declaration.output_schema()
    if declared is None:
        return OUTPUT_SCHEMA
    properties = dict(declared.get("properties", {}))
    for name, envelope in OUTPUT_SCHEMA["properties"].items():
        description = (properties.get(name) or {}).get("description")
        properties[name] = {**envelope, "description": description} if description else envelope
    required = list(declared.get("required", []))
    required += [name for name in OUTPUT_SCHEMA["required"] if name not in required]
    return {**declared, "type": "object", "properties": properties, "required": required}


def security_schemes(declaration: ToolDeclaration) -> list[dict[str, Any]]:
    """Per tool, how a client must be signed in (`_meta.securitySchemes`, read by ChatGPT): `noauth`
    when anonymous calls work, `oauth2` with the scope a token needs."""
    oauth = {"type": "oauth2", "scopes": [declaration.auth_scope] if declaration.auth_scope else []}
    return [oauth] if declaration.auth_required else [{"type": "noauth"}, oauth]


def mcp_input_schema(declaration: ToolDeclaration) -> dict[str, Any]:
    """The full input (a route-bound parameter is explicit), plus `confirmation` on consequential tools."""
    schema: dict[str, Any] = json.loads(json.dumps(declaration.input_schema()))
    properties = schema.setdefault("properties", {})
    if declaration.route_param and declaration.route_param not in properties:
        # A tool whose only input is its page's object (`input_serializer=None`): over MCP there is no
        # page, so the caller names the object, and a schema closed by `additionalProperties: false`
        # has to say so or no client that follows it can call the tool.
        properties[declaration.route_param] = route_param_schema(declaration)
        schema["required"] = [*schema.get("required", []), declaration.route_param]
    if declaration.consequential:
        properties[CONFIRMATION_PARAM] = {
            "type": "string",
            "maxLength": 1000,
            "description": (
                "Leave out at first. Never your own words: only the `confirmation` value of an earlier "
                "CONFIRMATION_REQUIRED answer, sent again with the same arguments after the person agreed."
            ),
        }
    return schema


def route_param_schema(declaration: ToolDeclaration) -> dict[str, Any]:
    """The schema of a route parameter the input serializer leaves out, from the endpoint's path
    converter: an integer for `<int:…>`, a UUID string for `<uuid:…>`, else a non-empty string."""
    converter = url_converters(declaration.endpoint).get(declaration.route_param)
    if isinstance(converter, IntConverter):
        return {"type": "integer", "minimum": 0}
    if isinstance(converter, UUIDConverter):
        return {"type": "string", "format": "uuid"}
    return {"type": "string", "minLength": 1}


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
            answer = _blocking(call, McpCall(declaration, given, current.http, confirmed, final))
            current.headers.update(answer.headers)
            if answer.status is not None:
                current.status = answer.status
            return answer

        async def done(answer: McpAnswer) -> Any:
            """The call's answer, or first the page the person must open (URL mode), when the client
            can be asked: the answer then comes back with the client's retry, carried sealed."""
            if answer.url is None or answer.is_error or not _can_open_pages(ctx, current.http):
                return _result(answer)
            if not _input_required(ctx):  # 2025-11-25: the error asks; the client's retry gets the result
                raise UrlElicitationRequiredError(
                    [
                        types.ElicitRequestURLParams(
                            message=answer.url.message,
                            url=answer.url.url,
                            elicitation_id=secrets.token_urlsafe(12),
                        )
                    ]
                )
            current.principal = None  # the write changed the caller's state: bind the page to it now
            now_who = current.who()
            question = types.ElicitRequest(
                params=types.ElicitRequestURLParams(message=answer.url.message, url=answer.url.url)
            )
            sealed = seal_request_state(
                principal=now_who, tool=declaration.name, arguments=arguments, carry={"result": answer.body}
            )
            return types.InputRequiredResult(input_requests={URL_KEY: question}, request_state=sealed)

        answers = params.input_responses or {}
        if URL_KEY in answers:  # the person was asked to open their page: the call's answer, as sealed
            arguments.pop(CONFIRMATION_PARAM, None)
            refused = spend_request_state(
                params.request_state,
                principal=current.who(),
                tool=declaration.name,
                arguments=arguments,
            )
            if refused is not None:
                return _refusal(refused, await run(confirmed=False, final=False))
            carried = carried_state(params.request_state).get("result")
            return _result(McpAnswer(carried if isinstance(carried, dict) else {"ok": True}))
        if not declaration.consequential:
            return await done(await run())
        confirmation = arguments.pop(CONFIRMATION_PARAM, None)
        who = current.who()
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
                    return await done(await run())
            return _refusal(DECLINED, await run(confirmed=False, final=False))
        if isinstance(confirmation, str) and confirmation:
            if confirmation_matches(confirmation, principal=who, tool=declaration.name, arguments=arguments):
                return await done(await run())
            if not can_ask:
                fresh = await run(confirmed=False, final=False)
                if not fresh.is_error and not fresh.preview:
                    # Nothing is left to confirm (the call's retry after the page it asked the person
                    # to open: the registration exists): what a call without the confirmation answers.
                    return _result(fresh)
                return _refusal(STALE_CONFIRMATION, fresh)
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


def _can_open_pages(ctx: Any, request: HttpRequest) -> bool:
    """The client declared URL-mode elicitation (2025-11-25 and later): with this request (2026-07-28),
    or in the handshake of the connection its credential opened (2025-11-25, `_remember_capabilities`)."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is not None and getattr(elicitation, "url", None) is not None:
        return True
    key = _capability_key(request)
    return key is not None and bool(cache.get(key))


#: How long a 2025-11-25 client's declared capabilities are remembered after its handshake.
CAPABILITIES_TTL = 24 * 3600


def _capability_key(request: HttpRequest) -> str | None:
    """Where a credential's client's capabilities are kept (none without a credential): the server is
    stateless, so a 2025-11-25 client's `initialize` and its later calls are requests apart."""
    credential = request.headers.get("Authorization", "")
    if not credential:
        return None
    return "webmcp.mcp.url-elicitation:" + hashlib.sha256(credential.encode()).hexdigest()


def _remember_capabilities(request: HttpRequest, body: bytes) -> None:
    """An `initialize` that declares URL-mode elicitation: remembered for the calls that follow with
    the same credential (the -32042 answer needs to know the client can open a page)."""
    key = _capability_key(request)
    try:
        message = json.loads(body)
    except ValueError:
        return
    if key is None or not isinstance(message, dict) or message.get("method") != "initialize":
        return
    params = message.get("params") or {}
    elicitation = (params.get("capabilities") or {}).get("elicitation") if isinstance(params, dict) else None
    if isinstance(elicitation, dict) and isinstance(elicitation.get("url"), dict):
        cache.set(key, True, CAPABILITIES_TTL)
    else:
        cache.delete(key)


def _input_required(ctx: Any) -> bool:
    """The client asks through input-required results (2026-07-28 and later), not server requests."""
    version = str(getattr(ctx, "protocol_version", "") or "")
    return version >= INPUT_REQUIRED_VERSION


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
    return current.identity_of(current.principal)


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
    identity_of: Callable[[str], str] | None = None,
) -> Callable[[HttpRequest], HttpResponse]:
    """The Django view serving `/mcp`: POST only, Origin checked (403), Host by ALLOWED_HOSTS.

    `scopes` (with WEBMCP_MCP_HIDE_OUT_OF_SCOPE on) hides and refuses tools by the caller's scopes;
    `resource_metadata` gives the URL of the RFC 9728 document the refusals' challenges point to.
    `identity_of` takes the caller's state out of a principal, for the SDK's envelope of a request
    state (this module's own seal binds the whole principal); by default the principal as it is.
    The view is exempt from CSRF (callers send a bearer token, not a cookie) and from
    `LoginRequiredMiddleware` (`login_not_required`).
    """
    server = build_server(call, resource_metadata=resource_metadata)
    # Django has checked the Host; the Origin is checked below with the site's own list.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)

    @login_not_required
    @csrf_exempt
    def view(request: HttpRequest) -> HttpResponse:
        origin = request.headers.get("Origin")
        if origin and origin not in allowed_origins():
            return HttpResponse("Invalid Origin header", status=403, content_type="text/plain")
        if request.method != "POST":
            return HttpResponse(status=405, headers={"Allow": "POST"})
        body = request.body
        if b'"initialize"' in body:  # a 2025-11-25 client's handshake: what it can ask the person
            _remember_capabilities(request, body)
        current = _Request(request, principal, identity_of or (lambda principal: principal))
        if scopes is not None and setting("WEBMCP_MCP_HIDE_OUT_OF_SCOPE"):
            current.scoped, current.scopes = True, scopes(request)
        if b'"requestState"' in body:  # unsealed, and bound to the caller, before the tool runs
            current.who()
        manager = StreamableHTTPSessionManager(
            app=server, stateless=True, json_response=True, security_settings=security
        )
        token = _current.set(current)
        try:
            status, headers, content = _thread_loop().run_until_complete(
                _exchange(manager, _scope(request), body)
            )
        finally:
            _current.reset(token)
        response = HttpResponse(content, status=current.status or status)
        for raw_name, raw_value in headers:
            if raw_name.lower() != b"content-length":
                response[raw_name.decode("latin-1")] = raw_value.decode("latin-1")
        for name, value in current.headers.items():
            response[name] = value
        return response

    return view


async def _exchange(
    manager: StreamableHTTPSessionManager, scope: dict[str, Any], body: bytes
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """One POST through the SDK's transport: its status, headers and body."""
    status: list[int] = []
    headers: list[tuple[bytes, bytes]] = []
    chunks: list[bytes] = []
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

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return (status[0] if status else 500), headers, b"".join(chunks)


# ── the request's own event loop ──────────────────────────────────────────────────────────────


class _Loops(threading.local):
    loop: asyncio.AbstractEventLoop | None = None


_loops = _Loops()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's event loop for the SDK's transport, made at its first `/mcp` request and closed
    with the thread.

    Why not an `async def` view: under WSGI (the sync gunicorn workers) Django runs one through
    asgiref's `async_to_sync`, which starts a thread and a new event loop for every request and sends
    each call into the app back to the request's thread through its executor; that plumbing, not the
    tool, was most of an MCP call (bench/profiles/README.md, "The MCP path"), and the bench row
    "MCP tools/call search_events ÷ API search throughput" missed its 0.5 with it. Here the loop runs
    on the request's own thread and the app's calls run in place (`_blocking`). Under ASGI Django runs
    this sync view in a worker thread, which gets a loop of its own the same way.
    """
    loop = _loops.loop
    if loop is None or loop.is_closed():
        loop = _loops.loop = asyncio.new_event_loop()
        weakref.finalize(threading.current_thread(), loop.close)
    return loop


def _blocking[**P, R](function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run the app's synchronous `function` (the ORM, the use case) in place, on the request's thread.

    The loop it is called from belongs to this one request (`_thread_loop`), so blocking it blocks
    nobody else; Django's async-safety check, which refuses the ORM where an event loop runs, is told
    so by hiding the loop while `function` runs."""
    running = asyncio._get_running_loop()
    asyncio._set_running_loop(None)
    try:
        return function(*args, **kwargs)
    finally:
        asyncio._set_running_loop(running)


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
