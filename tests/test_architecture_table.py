"""ARCHITECTURE.md's "Where each rule lives" names real places: every name in code type (between
backticks) in a row's place cell is a file or folder, a management command, a setting, or a module,
class, function or attribute of the code. A renamed or deleted piece fails here, so the table cannot
drift from the code."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import get_commands

pytestmark = pytest.mark.unit

ROOT = Path(settings.BASE_DIR)
DOC = ROOT / "ARCHITECTURE.md"
PACKAGES = ("core", "ops", "events", "accounts", "django_webmcp", "config", "readiness")
#: A short module name in the table stands for the module of the app that owns it.
SHORT = (
    "events.",
    "events.services.",
    "events.mail.",
    "accounts.",
    "accounts.oauth.",
    "core.",
    "django_webmcp.",
)
PATH = re.compile(r"^[a-z_]+(/[\w<>.\-]*)+$")
NAME = re.compile(r"^[A-Za-z_][\w.]*(\(\))?$")


def table_rows() -> list[tuple[str, str]]:
    """(rule, place) for each row of the table."""
    section = DOC.read_text(encoding="utf-8").split("## Where each rule lives", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0] not in ("rule", "---"):
            rows.append((cells[0], cells[1]))
    return rows


def modules() -> dict[str, Any]:
    """Every module of the project's packages, imported, by dotted name (migrations aside)."""
    found: dict[str, Any] = {}
    for package in PACKAGES:
        root = importlib.import_module(package)
        found[package] = root
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if ".migrations" in info.name:
                continue
            found[info.name] = importlib.import_module(info.name)
    return found


MISSING = object()


def has(owner: Any, name: str) -> Any:
    """`owner.name`, a dataclass field or an annotated attribute included; MISSING when it has none."""
    if hasattr(owner, name):
        return getattr(owner, name)
    fields = getattr(owner, "__dataclass_fields__", {})
    annotations = getattr(owner, "__annotations__", {})
    return name if name in fields or name in annotations else MISSING


def walk(found: Any, names: list[str]) -> bool:
    for name in names:
        found = has(found, name)
        if found is MISSING:
            return False
    return True


def imported(dotted: str) -> Any:
    """The longest importable module at the start of `dotted` (Django's and DRF's too), and the rest."""
    names = dotted.split(".")
    for cut in range(len(names), 0, -1):
        try:
            return importlib.import_module(".".join(names[:cut])), names[cut:]
        except ImportError:
            continue
    return None, names


def resolves(token: str, loaded: dict[str, Any]) -> bool:
    dotted = token.removesuffix("()")
    parts = dotted.split(".")
    candidates = [dotted, *(prefix + dotted for prefix in SHORT)]
    for candidate in candidates:
        names = candidate.split(".")
        for cut in range(len(names), 0, -1):
            module = loaded.get(".".join(names[:cut]))
            if module is not None and walk(module, names[cut:]):
                return True
    if parts[0] in ("django", "rest_framework"):
        module, rest = imported(dotted)
        return module is not None and walk(module, rest)
    # A class, function or constant named alone: defined at the top of some module.
    return any(parts[0] in vars(module) and walk(module, parts) for module in loaded.values())


def problem(token: str, loaded: dict[str, Any]) -> str | None:
    if token.startswith("manage.py "):
        command = token.split()[1]
        return None if command in get_commands() else f"no command {command}"
    if PATH.match(token):
        pattern = re.sub(r"<[^>]+>", "*", token.rstrip("/"))
        return None if any(ROOT.glob(pattern)) else f"no file or folder {token}"
    if re.fullmatch(r"[A-Z][A-Z0-9_]+", token) and hasattr(settings, token):
        return None
    if NAME.match(token):
        return None if resolves(token, loaded) else f"no module, class, function or attribute {token}"
    return f"{token}: not a name of the code (write it without backticks)"


def test_the_table_has_its_rows():
    assert len(table_rows()) >= 20


def test_every_place_the_table_names_exists():
    loaded = modules()
    problems = [
        f"{rule[:50]}…: {found}"
        for rule, place in table_rows()
        for token in re.findall(r"`([^`]+)`", place)
        if (found := problem(token, loaded))
    ]
    assert problems == []


def test_a_missing_name_is_caught():
    loaded = modules()
    assert problem("selectors.search_events", loaded) is None
    assert problem("selectors.search_everything", loaded)
    assert problem("core/not_a_module.py", loaded)
    assert problem("manage.py not_a_command", loaded)
    assert problem("NOT_A_SETTING", loaded)
    assert problem("Caller.rate_request", loaded) is None and problem("Caller.not_a_field", loaded)
    assert problem("django.contrib.sessions.backends.cached_db", loaded) is None
