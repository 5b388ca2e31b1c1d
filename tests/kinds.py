"""The kinds of test file: each declares one with a module-level `pytestmark` (the markers are registered
in pyproject.toml). `make test-fast` selects on them, so a file that declared none would run where it
should not, or be left out unseen; tests/conftest.py fails the collection of such a file."""

from __future__ import annotations

from types import ModuleType

KINDS = ("unit", "integration", "browser", "judges", "faults", "fuzz")


def kind_problem(module: ModuleType) -> str | None:
    """Why a test module's own `pytestmark` does not declare exactly one kind; None when it does.
    Markers added by a conftest (tests/browser adds `browser` to every test) do not count here."""
    marks = getattr(module, "pytestmark", [])
    marks = marks if isinstance(marks, list) else [marks]
    kinds = sorted({mark.name for mark in marks if getattr(mark, "name", None) in KINDS})
    if len(kinds) == 1:
        return None
    found = f"declares {', '.join(kinds)}" if kinds else "declares no kind"
    return (
        f"{module.__name__} {found}: give it a module-level `pytestmark` with exactly one of "
        f"{', '.join(f'pytest.mark.{kind}' for kind in KINDS)} (a list may add other markers)"
    )
