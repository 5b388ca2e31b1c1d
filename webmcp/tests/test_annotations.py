"""The mapping between WebMCP's and MCP's annotations is written once and held to what is sent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django_webmcp.annotations import MAPPING, mcp_annotations, mcp_meta, webmcp_annotations
from django_webmcp.registry import ToolDeclaration

DOC = Path(__file__).resolve().parents[1] / "docs" / "topics" / "annotations.md"


def only(flag: str) -> ToolDeclaration:
    return ToolDeclaration(
        name="t",
        description="T.",
        input_serializer=None,
        endpoint="e",
        method="GET",
        exposures=(),
        **{flag: True},
    )


@pytest.mark.parametrize("flag", sorted(MAPPING))
def test_each_flag_reaches_exactly_the_places_the_mapping_names(flag):
    webmcp, mcp = MAPPING[flag]
    tool = only(flag)
    assert webmcp_annotations(tool) == ({webmcp: True} if webmcp else {})
    sent_mcp = {
        f"annotations.{key}": value for key, value in _camel(mcp_annotations(tool)).items() if value is True
    }
    sent_mcp |= {f"_meta.{key}": value for key, value in mcp_meta(tool).items()}
    assert sent_mcp == ({mcp: True} if mcp else {})


def _camel(fields: dict) -> dict:
    return {re.sub(r"_(\w)", lambda m: m.group(1).upper(), key): value for key, value in fields.items()}


def test_destructive_is_not_consequential():
    assert "consequentialHint" not in webmcp_annotations(only("destructive"))
    assert mcp_annotations(only("consequential"))["destructive_hint"] is False


def test_the_documented_table_is_the_mapping():
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 3:
            rows[cells[0]] = (cells[1] if cells[1] != "—" else None, cells[2] if cells[2] != "—" else None)
    assert rows == MAPPING
