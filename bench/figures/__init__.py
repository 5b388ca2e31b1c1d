"""The figures of `make bench`, one module per group (`--only` names them).

Each group module has `NAME`, its `TARGETS`, a `measure(...)` that `bench/run.py` calls with what the
group needs (servers, the session, the profile), `rows(figure)` for the table, `failures(figure)` for the
self-check (correctness, not speed), and optionally `notes(figure)` (lines under the table) and
`details(figure)` (a table printed after it).
"""

from __future__ import annotations

from typing import Any

from bench.figures import (
    browser,
    contention,
    dashboard,
    mcp,
    pages,
    payments,
    peer,
    queries,
    questions,
    scale,
    throughput,
    waitlist,
)

# `--only` order (the order of measurement) and the table's order.
FIGURES = (
    "queries",
    "throughput",
    "pages",
    "scale",
    "browser",
    "contention",
    "questions",
    "mcp",
    "peer",
    "waitlist",
    "payments",
    "dashboard",
)
GROUPS = (
    throughput,
    pages,
    scale,
    queries,
    browser,
    contention,
    questions,
    mcp,
    peer,
    waitlist,
    payments,
    dashboard,
)
TARGETS = {key: value for group in GROUPS for key, value in group.TARGETS.items()}


def _taken(figures: dict[str, Any]):
    return [(group, figures[group.NAME]) for group in GROUPS if figures.get(group.NAME)]


def table_rows(figures: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [row for group, figure in _taken(figures) for row in group.rows(figure)]


def self_check_failures(figures: dict[str, Any]) -> list[str]:
    """Failures of correctness, not of speed: these make `make bench` exit non-zero."""
    return [failure for group, figure in _taken(figures) for failure in group.failures(figure)]


def notes(figures: dict[str, Any]) -> list[str]:
    """Measurements that explain a figure (printed under the table, kept in the JSON)."""
    return [
        line for group, figure in _taken(figures) if hasattr(group, "notes") for line in group.notes(figure)
    ]


def details(figures: dict[str, Any]) -> list[str]:
    """Tables printed after the main one (information, no target)."""
    found = (group.details(figure) for group, figure in _taken(figures) if hasattr(group, "details"))
    return [text for text in found if text]
