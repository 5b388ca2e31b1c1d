"""Grade one case's trace: the webmcp-evals trajectory match, then this project's rules from the seeds.

Rules on top of the upstream matcher (each one can only turn a pass into a fail):

- `no-call-allowed` — a NO case (small talk, a request the site cannot serve, a question the page text
  already answers) passes only when no tool was called at all.
- `relaxed-after-zero` — after a `search_events` call that succeeded with count 0, a later
  `search_events` must keep every filter of that search with the same value (`null` and `""` count as
  absent) and keep a keyword if it had one (rewording it is allowed, dropping it is not), unless the
  case says the person allowed a looser search (`allowRelaxAfterZero`: `true`, or the list of
  conditions they let go, e.g. `["level"]` for "any level is fine"). A zero result of an earlier turn
  (the case's replayed history) binds the last turn's searches in the same way.
- `history-differs` — the calls of the earlier turns, replayed on the page before the last turn, must
  have answered what the conversation says they answered (the functionresponse, matched as an expected
  `result`); otherwise the last turn was played on a page that is not the one the case describes.
- `invented-argument` — with `exactArguments`, a matched call may not carry argument keys the case
  does not expect (subset matching alone would accept an invented `query`).
- `claim-in-answer` — with `answerMustNot`, the agent's final answer (model mode; smoke mode has none)
  may match none of the case's patterns: e.g. telling a person who still has to pay that they are
  registered.

Over MCP (`via="mcp"`) there is no page, so every result says `uiUpdated: false`: the grader ignores
`uiUpdated` in the case's expected results and in its earlier turns' answers (the grading says which
keys it ignored, `ignoredOverMcp`). Everything else is graded as over WebMCP.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from .bank import Case
from .matcher import Call, Row, evaluate_trajectory, is_constraint, matches_value

SEARCH_TOOL = "search_events"
#: Result keys that say what the page did; over MCP there is no page.
PAGE_ONLY_KEYS = ("uiUpdated",)


@dataclass
class Grade:
    outcome: str  # "pass" | "fail"
    rows: list[Row]
    violations: list[dict] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # expected keys left out over MCP

    @property
    def reasons(self) -> list[str]:
        reasons = [f"{violation['rule']}: {violation['detail']}" for violation in self.violations]
        for row in self.rows:
            if row.outcome == "fail" and row.detail not in reasons:
                reasons.append(row.detail)
        return reasons

    def as_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "rows": [row.as_dict() for row in self.rows],
            "violations": self.violations,
            "reasons": self.reasons,
            **({"ignoredOverMcp": self.ignored} if self.ignored else {}),
        }


def conditions(arguments: Any) -> dict[str, str]:
    """The search conditions a call asked for; empty values mean "any" and are left out."""
    if not isinstance(arguments, dict):
        return {}
    found = {}
    for key, value in arguments.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        found[key] = value.strip().casefold() if isinstance(value, str) else value
    return found


def is_zero_result(result: Any) -> bool:
    return isinstance(result, dict) and result.get("ok") is True and result.get("count") == 0


def _keeps(key: str, value: Any, asked: dict) -> bool:
    """A filter must come back unchanged; the keyword may be reworded but not dropped."""
    if key == "query":
        return key in asked
    return asked.get(key) == value


def relaxed_after_zero(
    calls: list[Call], history: list[Call] = (), allowed: tuple[str, ...] = ()
) -> list[dict]:
    """Searches (of `calls`, the graded ones) that loosened an earlier zero-result search — one of
    `calls` or of the replayed `history` — beyond the conditions in `allowed`."""
    violations = []
    zero_searches: list[tuple[str, dict]] = []
    for position, call in enumerate([*history, *calls]):
        graded = position >= len(history)
        index = position - len(history)
        if call.functionName != SEARCH_TOOL:
            continue
        asked = conditions(call.args)
        for earlier, kept in zero_searches if graded else ():
            loosened = sorted(
                key for key, value in kept.items() if not _keeps(key, value, asked) and key not in allowed
            )
            if loosened:
                violations.append(
                    {
                        "rule": "relaxed-after-zero",
                        "callIndex": index,
                        "detail": (
                            f"call {index} searched again after {earlier} found nothing, dropping or "
                            f"changing {', '.join(loosened)} without the person's say-so"
                        ),
                    }
                )
                break
        if is_zero_result(call.result):
            label = f"call {index}" if graded else f"the earlier turn's call (history {position})"
            zero_searches.append((label, asked))
    return violations


def history_differs(case: Case, replayed: list[Call] | None) -> list[dict]:
    """Each call of the earlier turns must have been replayed and have answered as the case says."""
    violations = []
    replayed = replayed or []
    for position, step in enumerate(case.history()):
        actual = replayed[position] if position < len(replayed) else None
        if actual is None:
            problem = "was not replayed"
        elif actual.functionName != step["functionName"]:
            problem = f"was replayed as {actual.functionName}"
        elif not matches_value(step["response"], actual.result):
            problem = "answered differently on this site than the conversation says"
        else:
            continue
        violations.append(
            {
                "rule": "history-differs",
                "callIndex": None,
                "detail": (
                    f"earlier-turn call {position} ({step['functionName']}, after message {step['turn']}) "
                    f"{problem}"
                ),
            }
        )
    return violations


def invented_arguments(rows: list[Row]) -> list[dict]:
    violations = []
    for row in rows:
        if row.outcome != "pass" or row.expected is None or row.actual is None:
            continue
        expected = row.expected.get("arguments")
        if not isinstance(expected, dict) or is_constraint(expected):
            continue
        extra = sorted(set(conditions(row.actual.args)) - set(expected))
        if extra:
            violations.append(
                {
                    "rule": "invented-argument",
                    "callIndex": row.index,
                    "detail": (
                        f"{row.actual.functionName} was given {', '.join(extra)}, "
                        "which the person never asked for"
                    ),
                }
            )
    return violations


def _without_page_keys(value: Any, found: set[str]) -> Any:
    """`value` with every `result` (expected node) or `response` (earlier turn) stripped of the page-only
    keys, recursively through groups; `found` collects the keys removed."""
    if isinstance(value, list):
        return [_without_page_keys(item, found) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, inner in value.items():
        if key in ("result", "response") and isinstance(inner, dict):
            inner = _strip(inner, found)
        out[key] = _without_page_keys(inner, found)
    return out


def _strip(value: Any, found: set[str]) -> Any:
    if isinstance(value, dict):
        kept = {}
        for key, inner in value.items():
            if key in PAGE_ONLY_KEYS:
                found.add(key)
            else:
                kept[key] = _strip(inner, found)
        return kept
    if isinstance(value, list):
        return [_strip(item, found) for item in value]
    return value


def over_mcp(case: Case) -> tuple[Case, list[str]]:
    """The case as graded over MCP: its expectations without the page-only keys (and which it had)."""
    found: set[str] = set()
    expected = _without_page_keys(case.expectedCall, found)
    messages = _without_page_keys(case.messages, found)
    return dataclasses.replace(case, expectedCall=expected, messages=messages), sorted(found)


def grade(
    case: Case,
    calls: list[Call],
    history: list[Call] | None = None,
    via: str = "webmcp",
    answer: str | None = None,
) -> Grade:
    """`calls`: the last turn's calls; `history`: the earlier turns' calls as replayed on the page;
    `via`: `mcp` grades without the page-only keys (module docstring); `answer`: the agent's final
    answer, when there is one (model mode)."""
    ignored: list[str] = []
    if via == "mcp":
        case, ignored = over_mcp(case)
    rows = evaluate_trajectory(case.expectedCall, calls)
    violations: list[dict] = history_differs(case, history)
    if "NO" in case.meta.tags and calls:
        violations.append(
            {
                "rule": "no-call-allowed",
                "callIndex": 0,
                "detail": f"{len(calls)} tool call(s) made; this question needs none",
            }
        )
    allowed = case.meta.allowRelaxAfterZero
    if allowed is not True:
        violations += relaxed_after_zero(calls, history or [], allowed or ())
    if case.meta.exactArguments:
        violations += invented_arguments(rows)
    violations += claims_in_answer(case, answer)
    passed = all(row.outcome == "pass" for row in rows) and not violations
    return Grade("pass" if passed else "fail", rows, violations, ignored)


def claims_in_answer(case: Case, answer: str | None) -> list[dict]:
    """The case's `answerMustNot` patterns the final answer matches (none without an answer)."""
    if not answer:
        return []
    return [
        {
            "rule": "claim-in-answer",
            "callIndex": -1,
            "detail": f"the answer says what it must not ({pattern})",
        }
        for pattern in case.meta.answerMustNot
        if re.search(pattern, answer)
    ]


def calls_from_trace(trace: dict) -> list[Call]:
    """The graded calls of a trace (setup calls made before the conversation are not graded)."""
    return [
        Call(record["functionName"], record.get("args"), record.get("result"))
        for record in trace.get("calls", [])
    ]


def history_from_trace(trace: dict) -> list[Call]:
    """The earlier turns' calls as the runner replayed them (checked by `history-differs`)."""
    return [
        Call(record["functionName"], record.get("args"), record.get("result"))
        for record in trace.get("history", [])
    ]
