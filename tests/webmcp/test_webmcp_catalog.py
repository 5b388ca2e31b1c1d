"""`manage.py webmcp_catalog`: the catalogue file webmcp-evals reads in local mode."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django_webmcp import registry as registry_module
from django_webmcp.registry import Registry

from tests.webmcp.declarations import build_registry, tool

pytestmark = pytest.mark.unit


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    test_registry = build_registry()
    monkeypatch.setattr(registry_module, "registry", test_registry)
    return test_registry


def catalog(*args: str) -> tuple[str, dict]:
    out = StringIO()
    call_command("webmcp_catalog", *args, stdout=out)
    return out.getvalue(), json.loads(out.getvalue())


def assert_webmcp_evals_shape(catalogue: dict) -> None:
    assert set(catalogue) == {"tools"}
    for entry in catalogue["tools"]:
        assert set(entry) <= {"name", "description", "inputSchema", "annotations"}
        assert isinstance(entry["name"], str) and isinstance(entry["description"], str)
        assert entry["inputSchema"]["type"] == "object"


def test_webmcp_catalog_prints_every_tool(registry: Registry) -> None:
    text, catalogue = catalog()
    assert_webmcp_evals_shape(catalogue)
    assert catalogue == registry.catalogue()
    assert text.startswith('{\n  "tools": [')  # indented for review in diffs


def test_webmcp_catalog_prints_one_route(registry: Registry) -> None:
    _, catalogue = catalog("--route", "/events/itm-a/?utm=x")
    assert_webmcp_evals_shape(catalogue)
    assert catalogue == registry.catalogue("event-detail")
    assert [tool["name"] for tool in catalogue["tools"]] == ["join_item", "read_item"]


def test_webmcp_catalog_keeps_non_ascii_text_readable(monkeypatch: pytest.MonkeyPatch) -> None:
    chinese = Registry()
    chinese.register(tool(description="查詢活動"))
    monkeypatch.setattr(registry_module, "registry", chinese)
    text, catalogue = catalog()
    assert "查詢活動" in text
    assert catalogue["tools"][0]["description"] == "查詢活動"


def test_webmcp_catalog_refuses_an_unknown_path(registry: Registry) -> None:
    with pytest.raises(CommandError, match="/no/such/page"):
        catalog("--route", "/no/such/page")
