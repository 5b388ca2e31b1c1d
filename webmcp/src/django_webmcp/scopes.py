"""Whether a caller's token allows a tool: one predicate, asked to hide the tool from `tools/list`
and to refuse its call, so a client never sees a tool it would be refused, nor is refused one it saw.

`scopes` is the caller's token's scopes, or None when the caller sent no token (anonymous).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django_webmcp.oauth import bearer_challenge
from django_webmcp.registry import ToolDeclaration


def missing_scope(declaration: ToolDeclaration, scopes: frozenset[str] | None) -> str | None:
    """The scope the call needs and the caller lacks; None when the caller may call the tool.

    A tool with no `auth_scope` needs nothing. Without a token (None), a tool that is not
    `auth_required` may be called anonymously; one that is needs its scope.
    """
    if not declaration.auth_scope:
        return None
    if scopes is None:
        return declaration.auth_scope if declaration.auth_required else None
    return None if declaration.auth_scope in scopes else declaration.auth_scope


def allowed(declarations: Iterable[ToolDeclaration], scopes: frozenset[str] | None) -> list[ToolDeclaration]:
    """The declarations the caller may call, in their order."""
    return [declaration for declaration in declarations if missing_scope(declaration, scopes) is None]


def refusal(
    declaration: ToolDeclaration, scopes: frozenset[str] | None, *, resource_metadata: str = ""
) -> tuple[int, dict[str, Any], dict[str, str]] | None:
    """For a call the caller may not make: (HTTP status, envelope, headers) — 401 without a token, 403
    with a token that lacks the scope, each with its Bearer challenge; None when the call may go on."""
    scope = missing_scope(declaration, scopes)
    if scope is None:
        return None
    if scopes is None:
        status, code, error = 401, "AUTH_REQUIRED", ""
        message = "This tool needs the person to sign in."
    else:
        status, code, error = 403, "INSUFFICIENT_SCOPE", "insufficient_scope"
        message = f"The access token does not allow this tool (it needs the scope {scope})."
    envelope = {
        "ok": False,
        "code": code,
        "reason": code,
        "message": message,
        "nextAction": "Ask the person to sign in and grant the scope, then call again.",
        "retryable": False,
        "scope": scope,
    }
    challenge = bearer_challenge(resource_metadata=resource_metadata, error=error, scope=scope)
    return status, envelope, {"WWW-Authenticate": challenge}
