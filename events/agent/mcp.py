"""The site's tools over MCP (layer 4): one tool call performs the action row of the tool's name.

`webmcp.mcp` speaks the protocol; this module is what a call does here: `events.actions.perform` with
channel `mcp`, the token's scopes and the call's arguments (validated with the tool's input serializer,
the same one the API and the browser use). Reads are open; a write needs an account, reached through a
bearer token (an OAuth token of a connected agent, or a personal access token) with the row's scope. A
call that needs the person and has no token answers HTTP 401, a token without the scope 403, each with
the Bearer challenge that points the client to the person's sign-in (`resource_metadata`).
For a consequential tool not yet confirmed, `preview_first` asks for the
row's preview first: the refusals the use case would give come now, else one sentence for the person.
"""

from __future__ import annotations

from core.envelope import error_headers
from core.errors import AuthRequired, InsufficientScope
from core.visitors import Mode, Visitor
from webmcp.mcp import McpAnswer, McpCall

from .. import selectors
from ..actions import ACTIONS, Caller, perform, preview_first


def answer(
    call: McpCall,
    *,
    visitor: Visitor,
    scopes: frozenset[str] | None,
    client: str = "",
    resource_metadata: str = "",
) -> McpAnswer:
    """`scopes=None`: no token (anonymous); otherwise the token's scopes. `client`: the connected agent
    holding the token; `resource_metadata`: the URL challenges point to."""
    action = ACTIONS[call.declaration.name]
    caller = Caller(
        visitor=visitor,
        channel=Mode.MCP,
        scopes=scopes,
        token_only=True,
        rate_request=call.request,
        client=client,
    )
    tool_input = call.declaration.input_serializer
    if call.confirmed:
        performed = perform(action, caller, call.arguments, input=tool_input)
    else:
        performed = preview_first(action, caller, call.arguments, input=tool_input, final=call.final)
    error = performed.error
    if error is not None:
        version = selectors.state_version(visitor=visitor)
        status = None
        if isinstance(error, (AuthRequired, InsufficientScope)):
            error.extra.setdefault("scope", action.scope or "")
            status = error.http_status
        headers = error_headers(error, resource_metadata=resource_metadata)
        return McpAnswer(performed.body(state_version=version), is_error=True, headers=headers, status=status)
    return McpAnswer(performed.body(), preview=performed.preview or "")
