"""Every test file declares its kind (tests/kinds.py); a file without one fails collection."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from django.conf import settings

from tests.kinds import KINDS, kind_problem

pytestmark = pytest.mark.unit


def module(**attributes) -> ModuleType:
    made = ModuleType("tests.test_example")
    made.__dict__.update(attributes)
    return made


def test_one_kind_alone_or_in_a_list_is_enough():
    assert kind_problem(module(pytestmark=pytest.mark.unit)) is None
    assert kind_problem(module(pytestmark=[pytest.mark.integration, pytest.mark.django_db])) is None
    assert kind_problem(module(pytestmark=[pytest.mark.integration, pytest.mark.slow])) is None


def test_a_file_without_a_kind_or_with_two_is_refused():
    assert "declares no kind" in kind_problem(module())
    assert "declares no kind" in kind_problem(module(pytestmark=pytest.mark.django_db))
    assert "declares integration, unit" in kind_problem(
        module(pytestmark=[pytest.mark.unit, pytest.mark.integration])
    )


def test_every_kind_is_a_registered_marker():
    options = tomllib.loads((settings.BASE_DIR / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]
    registered = {line.split(":")[0] for line in options["markers"]}
    assert set(KINDS) | {"slow"} <= registered


def test_the_folders_test_fast_does_not_collect_hold_no_quick_test():
    """`make test-fast` ignores tests/browser and tests/fuzz (FAST_SKIPS in the Makefile): every test in
    the first is a browser test (its conftest marks each), every file of the second declares fuzz."""
    root = Path(__file__).resolve().parent
    makefile = (root.parent / "Makefile").read_text(encoding="utf-8")
    assert "FAST_SKIPS = --ignore=tests/browser --ignore=tests/fuzz" in makefile
    assert "add_marker(pytest.mark.browser)" in (root / "browser" / "conftest.py").read_text(encoding="utf-8")
    for path in (root / "fuzz").glob("test_*.py"):
        assert "pytest.mark.fuzz" in path.read_text(encoding="utf-8"), path.name


def test_only_the_fuzzers_use_the_schemathesis_plugin_test_fast_leaves_out():
    """`make test-fast` loads no schemathesis plugin (FAST_PLUGINS in the Makefile): only the files of
    tests/fuzz, which it does not collect, may use schemathesis."""
    root = Path(__file__).resolve().parent
    assert "FAST_PLUGINS = -p no:schemathesis" in (root.parent / "Makefile").read_text(encoding="utf-8")
    imports = re.compile(r"^\s*(?:import|from) schemathesis\b", re.MULTILINE)
    users = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if imports.search(path.read_text(encoding="utf-8"))
    }
    assert users and all(user.startswith("fuzz/") for user in users), sorted(users)
