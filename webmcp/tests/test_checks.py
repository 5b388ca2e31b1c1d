"""System checks: every id the code can give is documented in docs/checks.md, and the new ones fire."""

from __future__ import annotations

import re
from pathlib import Path

from django.core import checks
from django.test import override_settings
from django_webmcp.checks import check_registry, check_settings
from django_webmcp.registry import Binding, Exposure, Registry, ToolDeclaration

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "django_webmcp" / "checks.py"
DOC = ROOT / "docs" / "checks.md"


def test_every_check_id_in_the_code_is_documented_and_no_other():
    in_code = set(re.findall(r'"(webmcp\.[EW]\d{3})"', SOURCE.read_text(encoding="utf-8")))
    in_doc = set(re.findall(r"^## (webmcp\.[EW]\d{3})", DOC.read_text(encoding="utf-8"), re.MULTILINE))
    assert in_code == in_doc


def test_the_test_projects_declarations_pass():
    assert [m for m in checks.run_checks(tags=["webmcp"]) if m.level >= checks.ERROR] == []


@override_settings(WEBMCP_SERVRE_NAME="typo")
def test_an_unknown_webmcp_setting_is_a_warning():
    assert [message.id for message in check_settings()] == ["webmcp.W002"]


@override_settings(WEBMCP_PERMISSIONS_POLICY=["self", "example.org"])
def test_an_allowlist_entry_that_is_no_origin_is_an_error():
    assert [message.id for message in check_settings()] == ["webmcp.E017"]


def test_an_input_that_is_no_schema_source_and_a_bad_output_are_errors():
    registry = Registry()
    registry.register(
        ToolDeclaration(
            name="odd",
            description="Odd.",
            input_serializer=str,
            output_serializer=int,
            endpoint="api-search",
            method="GET",
            exposures=(Exposure("item-list", Binding.INPUT),),
        )
    )
    ids = [message.id for message in check_registry(registry)]
    assert "webmcp.E006" in ids and "webmcp.E016" in ids
