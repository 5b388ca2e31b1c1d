"""Every CSV cell is neutralised in one place (core/csvsafe.py), and nothing else in the site writes CSV."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from django.conf import settings

from core.csvsafe import safe_cell

pytestmark = pytest.mark.unit


#: The site's own code: every top-level package but tests, tools and the environment.
def _site() -> list[Path]:
    """Every Python file of ours but the tests: node_modules, hidden folders (the environment, the
    tools) and the tests are not walked at all."""
    found = []
    for folder, folders, files in os.walk(settings.BASE_DIR):
        folders[:] = [
            name for name in folders if not name.startswith(".") and name not in {"tests", "node_modules"}
        ]
        found += [Path(folder, name) for name in files if name.endswith(".py")]
    return found


SITE = _site()


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_cell_starting_a_formula_is_text(start):
    assert safe_cell(f"{start}1+1") == f"'{start}1+1"


@pytest.mark.parametrize(
    ("value", "cell"),
    [("Ada", "Ada"), ("", ""), (None, ""), (42, "42"), (-3, "'-3"), ("a=b", "a=b"), ("王小明", "王小明")],
)
def test_other_cells_are_their_text(value, cell):
    assert safe_cell(value) == cell


def test_only_core_csvsafe_makes_a_csv_writer():
    makers = {"writer", "DictWriter"}
    found = []
    for path in SITE:
        if path.name == "csvsafe.py" and path.parent.name == "core":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in makers
                and getattr(node.value, "id", "") == "csv"
            ):
                found.append(f"{path.relative_to(settings.BASE_DIR)}:{node.lineno}")
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "csv"
                and makers & {alias.name for alias in node.names}
            ):
                found.append(f"{path.relative_to(settings.BASE_DIR)}:{node.lineno}")
    assert found == [], "write CSV with core.csvsafe.writer (every cell neutralised)"
