"""`tools/list` answers descriptions made once per process (django_webmcp/mcp.py keeps them), yet never stale:
other declarations (another registry) get descriptions of their own."""

import pytest
from django_webmcp import mcp

from tests.webmcp.declarations import build_registry

pytestmark = pytest.mark.unit


def test_descriptions_are_kept_for_the_same_declarations_and_made_again_for_others(monkeypatch):
    first = build_registry()
    monkeypatch.setattr(mcp, "registry", first)
    listed = mcp.mcp_tools()
    assert [tool.name for tool in listed] == [declaration.name for declaration in first.tools()]
    again = mcp.mcp_tools()
    assert all(kept is made for kept, made in zip(again, listed, strict=True))
    listed.clear()  # a caller's list is its own
    assert len(mcp.mcp_tools()) == len(first.tools())

    other = build_registry()
    monkeypatch.setattr(mcp, "registry", other)
    described = mcp.mcp_tools()
    assert all(new is not kept for new, kept in zip(described, again, strict=True))
    assert [tool.model_dump() for tool in described] == [tool.model_dump() for tool in again]
