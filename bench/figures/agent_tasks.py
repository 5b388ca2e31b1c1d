"""What whole tasks cost an agent: three tasks, each done on the UI path (`ui_path.py`) and on the tool
path (`tool_path.py`), in Chromium, from a loaded `/events/` page with its tools registered.

- SEL-01: free beginner events in Taipei (the evals' SEL-01).
- ORD-01: search "WebMCP", then the first result's details (the evals' ORD-01).
- save: search "WebMCP" and save the first result (the evals' ORD-03), as an anonymous visitor.

Per task and path: the steps, the bytes read and the wall time (Python's clock around the whole task,
first observation included). Every run has a fresh browser context (no cookies, so a new anonymous
session, and an empty cache); the two paths alternate. Both paths must end in the same state.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from bench.figures.tool_path import TIMEOUT_MS, ToolAgent, manifest_names
from bench.figures.ui_path import SWAP_PROBE, UIAgent
from bench.infra import BenchError, log
from harness.tools import visible_event_ids, wait_for_tools

SELECTION = {"location": "taipei", "price": "free", "level": "beginner"}
KEYWORD = "WebMCP"
FORM = "#search-form"
FIRST_RESULT_LINK = "#results [data-event-id] .event-card-title a"
PATHS = ("ui", "tool")


@dataclass(frozen=True)
class Task:
    key: str
    about: str
    ui: Callable[[UIAgent], None]
    tool: Callable[[ToolAgent], Any]
    # The state each path ends in, read after the clock has stopped; the two must be equal.
    ui_state: Callable[[Any], dict]
    tool_state: Callable[[Any, Any], dict]
    # The tools the task needs, one call per action: the fewest steps any tool path can take.
    actions: tuple[str, ...]


# ---- the UI path's actions ------------------------------------------------------------------------


def select_conditions(agent: UIAgent) -> None:
    form = agent.page.locator(FORM)
    for name, value in SELECTION.items():
        agent.act(
            f"select {name}",
            lambda name=name, value=value: form.locator(f"[name={name}]").select_option(value),
        )


def search_keyword(agent: UIAgent) -> None:
    form = agent.page.locator(FORM)
    agent.act("fill keyword", lambda: form.locator("[name=query]").fill(KEYWORD))
    agent.act_and_swap("click Search", lambda: form.locator("button[type=submit]").click())


def open_first_result(agent: UIAgent) -> None:
    agent.act_and_navigate(
        "click the first result", lambda: agent.page.locator(FIRST_RESULT_LINK).first.click()
    )


def sel_ui(agent: UIAgent) -> None:
    agent.arrive()
    select_conditions(agent)
    agent.act_and_swap("click Search", lambda: agent.page.locator(f"{FORM} button[type=submit]").click())


def ord_ui(agent: UIAgent) -> None:
    agent.arrive()
    search_keyword(agent)
    open_first_result(agent)


def save_ui(agent: UIAgent) -> None:
    ord_ui(agent)
    agent.act_and_swap("click Save", lambda: agent.page.locator("#save-toggle").click())


# ---- the tool path's calls ------------------------------------------------------------------------


def first_result(agent: ToolAgent) -> str:
    found = agent.call("search_events", {"query": KEYWORD})
    if not found.get("events"):
        raise BenchError(f"search_events found no event for {KEYWORD!r}")
    return found["events"][0]["id"]


def sel_tool(agent: ToolAgent) -> Any:
    agent.arrive()
    return agent.call("search_events", SELECTION)


def ord_tool(agent: ToolAgent) -> Any:
    agent.arrive()
    return agent.call("get_event_details", {"event_id": first_result(agent)})


def save_tool(agent: ToolAgent) -> Any:
    agent.arrive()
    return agent.call("save_event", {"event_id": first_result(agent)})


# ---- end states -----------------------------------------------------------------------------------


def listed(page) -> dict:
    return {"events": visible_event_ids(page)}


def listed_by_tool(page, answer: dict) -> dict:
    ids = [event["id"] for event in answer["events"]]
    # The call showed its result before it answered (uiUpdated is a fact): the page lists it already.
    if answer.get("uiUpdated") is not True or visible_event_ids(page) != ids:
        raise BenchError(
            f"search_events answered {ids}, uiUpdated={answer.get('uiUpdated')!r}, but the page "
            f"shows {visible_event_ids(page)}"
        )
    return {"events": ids}


def event_page(page) -> dict:
    return {
        "event": urlsplit(page.url).path.rstrip("/").rsplit("/", 1)[-1],
        "title": page.locator("#event-title").inner_text().strip(),
    }


def event_details(page, answer: dict) -> dict:
    return {"event": answer["event"]["id"], "title": answer["event"]["title"]}


def saved(page) -> dict:
    """What the visitor's session holds, asked of the site (the browser context's cookies)."""
    return {"saved": [event["id"] for event in page.request.get("/api/me/saved").json()["events"]]}


def saved_by_ui(page) -> dict:
    if page.locator("#save-toggle").get_attribute("aria-pressed") != "true":
        raise BenchError("Save on the UI path did not show the event as saved")
    return saved(page)


def saved_by_tool(page, answer: dict) -> dict:
    if answer.get("alreadySaved") is not False:
        raise BenchError(f"save_event in a fresh session answered {answer}")
    return saved(page)


TASKS = (
    Task(
        "SEL-01",
        "free beginner events in Taipei",
        sel_ui,
        sel_tool,
        listed,
        listed_by_tool,
        ("search_events",),
    ),
    Task(
        "ORD-01",
        f"search {KEYWORD!r}, then the first result's details",
        ord_ui,
        ord_tool,
        event_page,
        event_details,
        ("search_events", "get_event_details"),
    ),
    Task(
        "save",
        f"search {KEYWORD!r}, save the first result",
        save_ui,
        save_tool,
        saved_by_ui,
        saved_by_tool,
        ("search_events", "save_event"),
    ),
)


# ---- runs -----------------------------------------------------------------------------------------


def open_list(browser, base_url: str):
    """A fresh context with `/events/` loaded and its tools registered: where every task starts."""
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    context.add_init_script(SWAP_PROBE)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto("/events/")
    wait_for_tools(page, manifest_names(page), timeout_ms=10_000, poll_ms=20)
    return context, page


def run_once(browser, base_url: str, task: Task, path: str) -> dict:
    context, page = open_list(browser, base_url)
    try:
        agent: UIAgent | ToolAgent = UIAgent(page) if path == "ui" else ToolAgent(page, base_url)
        started = time.perf_counter()
        answer = task.ui(agent) if isinstance(agent, UIAgent) else task.tool(agent)
        seconds = time.perf_counter() - started
        state = task.ui_state(page) if isinstance(agent, UIAgent) else task.tool_state(page, answer)
        run = {
            "seconds": seconds,
            "steps": agent.steps,
            "bytes": sum(read["bytes"] for read in agent.reads),
            "reads": agent.reads,
            "state": state,
        }
        if isinstance(agent, ToolAgent):
            run["calls"] = agent.calls
        return run
    finally:
        context.close()


def summary(runs: list[dict]) -> dict:
    return {
        "steps": round(statistics.median(run["steps"] for run in runs)),
        "bytes": round(statistics.median(run["bytes"] for run in runs)),
        "ms": round(statistics.median(run["seconds"] for run in runs) * 1000, 1),
        # Each read: what came before it, its bytes (first run) and its times (medians, ms).
        "reads": [
            {
                **read,
                **{
                    key: round(statistics.median(run["reads"][index][key] for run in runs), 1)
                    for key in ("ms", "read_ms")
                    if key in read
                },
            }
            for index, read in enumerate(runs[0]["reads"])
        ],
        "runs_ms": [round(run["seconds"] * 1000, 1) for run in runs],
        "runs_bytes": [run["bytes"] for run in runs],
    }


def task_figures(task: Task, runs: dict[str, list[dict]]) -> dict:
    ui, tool = summary(runs["ui"]), summary(runs["tool"])
    states = [run["state"] for path in PATHS for run in runs[path]]
    different = [state for state in states if state != states[0]]
    return {
        "about": task.about,
        "ui": ui,
        "tool": tool,
        "fewer_steps": round(ui["steps"] / tool["steps"], 2),
        "minimum_steps": len(task.actions),
        "tool_calls": [call["tool"] for call in runs["tool"][0]["calls"]],
        "actions": list(task.actions),
        "fewer_bytes": round(ui["bytes"] / tool["bytes"], 2),
        "less_time": round(ui["ms"] / tool["ms"], 2),
        "end_state": states[0],
        "same_end_state": not different,
        "other_end_state": different[0] if different else None,
    }


def agent_tasks(browser, base_url: str, *, rounds: int) -> dict:
    for task in TASKS:  # warm-up (templates, connections, the browser's cache of static files)
        for path in PATHS:
            run_once(browser, base_url, task, path)
    runs: dict[str, dict[str, list[dict]]] = {task.key: {path: [] for path in PATHS} for task in TASKS}
    for index in range(rounds):
        for task in TASKS:
            for path in PATHS if index % 2 == 0 else PATHS[::-1]:
                runs[task.key][path].append(run_once(browser, base_url, task, path))
    tasks = {task.key: task_figures(task, runs[task.key]) for task in TASKS}
    calls = [call for task in TASKS for run in runs[task.key]["tool"] for call in run["calls"]]
    requests_by_tool: dict[str, list[str]] = {}  # each tool's first call
    for call in calls:
        requests_by_tool.setdefault(call["tool"], call["requests"])
    for key, figure in tasks.items():
        ui, tool = figure["ui"], figure["tool"]
        log(
            f"  {key}: UI {ui['steps']} steps, {ui['bytes']} B, {ui['ms']:.0f} ms; "
            f"tool {tool['steps']} steps, {tool['bytes']} B, {tool['ms']:.0f} ms"
        )
    return {
        "snapshot": 'page.aria_snapshot(mode="ai")',
        "tasks": tasks,
        # Same-origin requests other than static files made during each tool call (the contract: 1).
        "requests_per_call": sorted({len(call["requests"]) for call in calls}),
        "calls": len(calls),
        "requests_by_tool": requests_by_tool,
    }
