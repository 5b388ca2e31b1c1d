"""One declaration, two vocabularies: the WebMCP draft's tool annotations and MCP's.

The two are not the same words for the same things (`destructiveHint` is not `consequentialHint`), so
the mapping is written out here, once, and tested (tests/test_annotations.py keeps `MAPPING` equal to
what `webmcp_annotations` and `mcp_annotations` produce, and docs/topics/annotations.md shows it).

A declaration's flags (`ToolDeclaration`):

- `read_only`: WebMCP `readOnlyHint`; MCP `annotations.readOnlyHint`.
- `untrusted_content`: WebMCP `untrustedContentHint`; MCP has no such hint: `_meta.untrustedContentHint`.
- `consequential`: WebMCP `consequentialHint`; MCP has no hint for it: the tool takes a
  `confirmation` argument and the person is asked (elicitation) before it runs.
- `debugging`: WebMCP `debugging`; over MCP the tool is not listed (unless WEBMCP_MCP_DEBUGGING_TOOLS).
- `destructive`, `idempotent`: MCP only (`destructiveHint`, `idempotentHint`); the draft has neither.
- always: MCP `openWorldHint: false` (a site's tools act on that site only).

Only true WebMCP hints are sent: an omitted annotation is `null` to the browser, which the draft keeps
apart from `false`, and "not read-only" is what no hint already says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django_webmcp.registry import ToolDeclaration

#: flag of the declaration → (its WebMCP annotation, where MCP carries it).
MAPPING: dict[str, tuple[str | None, str | None]] = {
    "read_only": ("readOnlyHint", "annotations.readOnlyHint"),
    "untrusted_content": ("untrustedContentHint", "_meta.untrustedContentHint"),
    "consequential": ("consequentialHint", None),
    "debugging": ("debugging", None),
    "destructive": (None, "annotations.destructiveHint"),
    "idempotent": (None, "annotations.idempotentHint"),
}


def webmcp_annotations(declaration: ToolDeclaration) -> dict[str, bool]:
    """The true WebMCP hints of `declaration`, in the draft's spelling."""
    return {
        webmcp: True
        for flag, (webmcp, _mcp) in MAPPING.items()
        if webmcp is not None and getattr(declaration, flag)
    }


def mcp_annotations(declaration: ToolDeclaration) -> dict[str, Any]:
    """MCP's `ToolAnnotations` fields (snake case, as the SDK takes them) for `declaration`."""
    return {
        "title": declaration.title or None,
        "read_only_hint": declaration.read_only,
        "destructive_hint": declaration.destructive,
        "idempotent_hint": declaration.idempotent,
        "open_world_hint": False,
    }


def mcp_meta(declaration: ToolDeclaration) -> dict[str, Any]:
    """What MCP carries in the tool's `_meta` because it has no annotation for it."""
    return {"untrustedContentHint": True} if declaration.untrusted_content else {}
