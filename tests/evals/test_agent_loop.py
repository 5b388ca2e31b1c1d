"""The runner's loop (evals/model.py `run_agent`) ends a conversation that can only repeat itself: a turn
of more calls than MAX_CALLS_PER_TURN is not played, and a call refused REFUSALS_BEFORE_STOP times with
the same arguments is not made again, while one identical retry of a failed call still is. A scripted
client and page stand in for the model and the browser (the loop is what is tested)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evals.browser import CallRecord
from evals.model import MAX_CALLS_PER_TURN, REFUSALS_BEFORE_STOP, run_agent

pytestmark = pytest.mark.unit

USAGE = {"prompt": 10, "completion": 1}


def call(name: str, **arguments: Any) -> dict:
    return {
        "id": f"c-{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


class Client:
    """Answers each request with the next scripted turn: a list of calls, or a text answer."""

    def __init__(self, turns: list[list[dict] | str]) -> None:
        self.turns = list(turns)
        self.requests = 0

    def exchange(self, messages: list[dict], specs: list[dict]) -> tuple[dict, dict]:
        self.requests += 1
        turn = self.turns.pop(0)
        if isinstance(turn, str):
            return {"content": turn}, USAGE
        return {"content": None, "tool_calls": turn}, USAGE


class Page:
    """`save_event` is refused until `fixed_after` calls have been made; every other tool answers ok."""

    via = "webmcp"

    def __init__(self, fixed_after: int = 10**6) -> None:
        self.made: list[tuple[str, dict]] = []
        self.fixed_after = fixed_after

    def context_text(self) -> dict:
        return {"url": "http://testserver/events/", "title": "Events", "text": ""}

    def tools(self) -> list[dict]:
        return [
            {"name": name, "description": name, "inputSchema": {"type": "object"}}
            for name in ("save_event", "search_events")
        ]

    def call(self, name: str, args: dict) -> CallRecord:
        self.made.append((name, args))
        if name == "save_event" and len(self.made) <= self.fixed_after:
            return CallRecord(name, args, result={"ok": False, "code": "SERVICE_UNAVAILABLE"})
        return CallRecord(name, args, result={"ok": True})


def test_a_turn_of_too_many_calls_is_not_played():
    page = Page()
    client = Client([[call("search_events", query=str(n)) for n in range(MAX_CALLS_PER_TURN + 1)]])
    trace = run_agent(client, page, [{"role": "user", "content": "find"}], max_steps=8)
    assert trace["stoppedBy"] == "too-many-calls" and page.made == [] and trace["finalAnswer"] is None


def test_as_many_calls_as_allowed_in_a_turn_are_played():
    page = Page()
    turn = [call("search_events", query=str(n)) for n in range(MAX_CALLS_PER_TURN)]
    trace = run_agent(Client([turn, "done"]), page, [{"role": "user", "content": "find"}], max_steps=8)
    assert trace["stoppedBy"] == "answer" and len(page.made) == MAX_CALLS_PER_TURN


def test_a_call_refused_twice_is_not_made_a_third_time():
    page = Page()
    client = Client([[call("save_event", event_id="evt-1")]] * 8)
    trace = run_agent(client, page, [{"role": "user", "content": "save"}], max_steps=8)
    assert trace["stoppedBy"] == "repeated-refusal"
    assert len(page.made) == REFUSALS_BEFORE_STOP == 2 and client.requests == 3
    assert trace["finalAnswer"] is None


def test_one_identical_retry_of_a_failed_call_is_still_made_and_may_succeed():
    page = Page(fixed_after=1)
    client = Client([[call("save_event", event_id="evt-1")], [call("save_event", event_id="evt-1")], "saved"])
    trace = run_agent(client, page, [{"role": "user", "content": "save"}], max_steps=8)
    assert trace["stoppedBy"] == "answer" and trace["finalAnswer"] == "saved"
    assert [record["result"]["ok"] for record in trace["calls"]] == [False, True]


def test_a_refused_call_with_other_arguments_is_made():
    page = Page()
    client = Client(
        [[call("save_event", event_id="evt-1")]] * 2 + [[call("save_event", event_id="evt-2")], "no luck"]
    )
    trace = run_agent(client, page, [{"role": "user", "content": "save"}], max_steps=8)
    assert trace["stoppedBy"] == "answer" and [args for _, args in page.made] == [
        {"event_id": "evt-1"},
        {"event_id": "evt-1"},
        {"event_id": "evt-2"},
    ]
