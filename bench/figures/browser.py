"""The browser figures, in Debian's Chromium with WebMCP on, driven by Playwright (never downloaded):
what whole tasks cost an agent on the UI path and on the tool path (`agent_tasks.py`), and tool
availability with the bytes of /events/ (`availability.py`). Chromium is the harness's
(`harness.chromium`), as in the tests and the evals.
"""

from __future__ import annotations

import math

from bench.figures import agent_tasks, availability
from bench.infra import Server, log
from bench.tables import verdict
from harness.chromium import launch

NAME = "browser"
# Per task, the UI path's figure ÷ the tool path's; steps: the tool path takes the task's minimum.
TARGETS = {"fewer_bytes": 10.0, "less_time": 3.0, "tools_ms": 50.0, "page_kb": 100.0}


def measure(server: Server, profile: dict) -> dict:
    log(
        "Chromium (WebMCP): agent tasks on the UI path and the tool path, tool availability, "
        "bytes of /events/"
    )
    rounds = profile["browser_rounds"]
    with launch() as browser:
        return {
            "agent_tasks": agent_tasks.agent_tasks(browser, server.base_url, rounds=rounds),
            "availability": availability.availability(browser, server.base_url, rounds=rounds),
        }


def _kb(value: float) -> str:
    """Bytes as kB, one decimal."""
    return f"{value / 1000:.1f}"


# Per measure: its label, its target key, the figure of each path it compares, how one is shown, its unit.
MEASURES = (
    ("bytes read", "fewer_bytes", "bytes", _kb, " kB"),
    ("wall time", "less_time", "ms", lambda value: f"{value:.0f}", " ms"),
)


def _times(ratio: float) -> str:
    """A ratio cut (not rounded) to one decimal, so that a miss never reads as the target."""
    return f"{math.floor(ratio * 10) / 10:.1f}×"


def _steps_row(tasks: dict) -> tuple[str, str, str, str]:
    """The tool path's steps against the task's minimum: one call per action the task needs, each the
    action's own tool. (A ratio to the UI path's steps cannot say more: the pages take 3–4 steps, so
    no tool design could make it large.)"""
    measured = ", ".join(
        f"{name} {figure['tool']['steps']} of {figure['minimum_steps']} "
        f"({' + '.join(figure['tool_calls'])}; UI {figure['ui']['steps']})"
        for name, figure in tasks.items()
    )
    at_minimum = all(
        figure["tool"]["steps"] == figure["minimum_steps"] and figure["tool_calls"] == figure["actions"]
        for figure in tasks.values()
    )
    return (
        "agent tasks, tool path: steps",
        measured,
        "the minimum: one call per action",
        verdict(at_minimum),
    )


def _task_rows(tasks: dict) -> list[tuple[str, str, str, str]]:
    rows = [_steps_row(tasks)]
    for label, key, field, shown, unit in MEASURES:
        # The ratio from the two figures themselves (the JSON's ratios are rounded).
        ratios = {name: figure["ui"][field] / figure["tool"][field] for name, figure in tasks.items()}
        measured = ", ".join(
            f"{name} {_times(ratios[name])} "
            f"({shown(figure['ui'][field])} vs {shown(figure['tool'][field])}{unit})"
            for name, figure in tasks.items()
        )
        rows.append(
            (
                f"agent tasks, UI ÷ tool path: {label}",
                measured,
                f"≥ {TARGETS[key]:.0f}× each",
                verdict(min(ratios.values()) >= TARGETS[key]),
            )
        )
    return rows


def rows(b: dict) -> list[tuple[str, str, str, str]]:
    at, av = b["agent_tasks"], b["availability"]
    requests = at["requests_per_call"]
    return [
        *_task_rows(at["tasks"]),
        (
            "requests per tool call (same origin, not static)",
            f"{'–'.join(map(str, requests))} (each of {at['calls']} calls)",
            "1",
            verdict(requests == [1]),
        ),
        (
            "tools registered after DOMContentLoaded",
            f"{av['after_dcl_ms']:.0f} ms ({len(av['tools'])} tools; "
            f"getTools answers in {av['answer_ms']:.0f} ms)",
            f"≤ {TARGETS['tools_ms']:.0f} ms",
            verdict(av["after_dcl_ms"] <= TARGETS["tools_ms"]),
        ),
        (
            "/events/ transferred, third-party requests",
            f"{av['bytes'] / 1000:.1f} kB in {av['requests']} requests, "
            f"{av['third_party_requests']} third-party",
            f"≤ {TARGETS['page_kb']:.0f} kB, 0",
            verdict(av["bytes"] / 1000 <= TARGETS["page_kb"] and av["third_party_requests"] == 0),
        ),
    ]


def failures(b: dict) -> list[str]:
    at = b.get("agent_tasks")
    if not at:
        return []
    found = []
    if at["requests_per_call"] != [1]:
        found.append(
            f"browser: a tool call made {at['requests_per_call']} requests, not exactly 1 "
            f"(each tool's first call: {at['requests_by_tool']})"
        )
    for name, figure in at["tasks"].items():
        if not figure["same_end_state"]:
            found.append(
                f"browser: {name}: the paths did not end in the same state "
                f"({figure['end_state']} vs {figure['other_end_state']})"
            )
    return found


def _steps(path: dict) -> str:
    return f"{path['steps']} step{'' if path['steps'] == 1 else 's'}"


def _reads(path: dict) -> str:
    return ", ".join(f"{read['after']} {_kb(read['bytes'])} kB {read['ms']:.0f} ms" for read in path["reads"])


def notes(b: dict) -> list[str]:
    """What each path read in each task, step by step (bytes of the first run, medians of the times)."""
    at = b.get("agent_tasks")
    if not at:
        return []
    lines = []
    for name, figure in at["tasks"].items():
        ui, tool = figure["ui"], figure["tool"]
        lines.append(
            f"{name} ({figure['about']}): UI path, {_steps(ui)}: {_reads(ui)}; "
            f"tool path, {_steps(tool)}: {_reads(tool)}"
        )
    requests = "; ".join(f"{tool} {', '.join(paths)}" for tool, paths in at["requests_by_tool"].items())
    lines.append(f"the UI path reads {at['snapshot']}; each tool call's one request: {requests}")
    return lines
