"""docs/agent-contract.md says nothing the code does not: every code, reason and status of the error
classes, and every reason the browser runtime produces, is in its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django_webmcp.mcp import REFUSALS
from django_webmcp.registry import error_reasons

from core import errors as site_errors
from core import exceptions
from events import errors

pytestmark = pytest.mark.unit

DOC = Path(settings.BASE_DIR) / "docs" / "agent-contract.md"


def _error_classes() -> list[type[site_errors.DomainError]]:
    found, todo = [], [site_errors.DomainError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    ours = [
        cls for cls in found if cls.__module__ in (errors.__name__, site_errors.__name__, exceptions.__name__)
    ]
    # A grouping class such as Conflict names a code but no reason of its own; it is never raised. Nor
    # is a base refusal the project answers in its own words (settings.ERROR_CLASSES: its subclass is).
    replaced = {name for name in settings.ERROR_CLASSES}
    return [
        cls
        for cls in ours
        if (cls.reason != site_errors.DomainError.reason or cls.code == "INTERNAL_ERROR")
        and not (cls.__module__ == site_errors.__name__ and cls.__name__ in replaced)
    ]


def _table_rows() -> dict[str, str]:
    """The codes table: code -> the rest of its row."""
    section = DOC.read_text().split("## Codes and reasons", 1)[1]
    return {
        match.group(1): match.group(2)
        for match in re.finditer(r"^\| `([A-Z_]+)` \|(.*)$", section, re.MULTILINE)
    }


def test_every_error_class_is_in_the_codes_table():
    rows = _table_rows()
    for cls in _error_classes():
        assert cls.code in rows, f"{cls.__name__}: code {cls.code} missing"
        assert f"`{cls.reason}`" in rows[cls.code], f"{cls.__name__}: reason {cls.reason} not in its row"
        retryable = rows[cls.code].split("|")[-3].strip()
        assert retryable == ("yes" if cls.retryable else "no"), cls.__name__


def test_every_runtime_reason_is_in_the_codes_table():
    text = "\n".join(_table_rows().values())
    for reason in error_reasons().values():
        assert f"`{reason}`" in text, reason


def test_every_mcp_refusal_is_in_its_codes_row():
    rows = _table_rows()
    for refusal in REFUSALS:
        assert refusal["code"] in rows, refusal["code"]
        assert f"`{refusal['reason']}`" in rows[refusal["code"]], refusal["reason"]
