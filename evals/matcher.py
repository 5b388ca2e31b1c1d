"""Grading of tool-call traces with the semantics of Google's webmcp-evals CLI (`src/matcher.ts`, `utils.ts`).

Written from the CLI's behaviour, not translated line by line. What it does:

- An argument or result value matches when: a *constraint object* (non-empty, every key starts with `$`)
  holds for it; otherwise objects match as **subsets** (every expected key present in the actual value
  and matching; extra actual keys ignored), arrays **strictly** (same length, element by element) and
  anything else by strict JSON equality (`true` is not `1`).
- Operators: `$pattern` (regex *search* in a string; a leading `(?i)`-style flag group is accepted),
  `$contains` (substring of a string; **our extension**: for an array, some element matches the
  operand), `$gt/$gte/$lt/$lte` (numbers only), `$type` (`string number boolean object array null`),
  `$any` (present, any value). Unknown `$` keys are ignored, as upstream does (the bank loader refuses
  them in our own files).
- An expected call `{functionName, arguments?, result?, optional?}` matches an actual call with the same
  name whose arguments match (`arguments` absent or null: any arguments) and, when `result` is given,
  whose result matches it.
- `expectedCall` is a list of nodes matched in order (a single node is accepted as a list of one).
  `{ordered: [...]}` is a sub-sequence; `{unordered: [...]}` takes the next calls in any order (maximum
  bipartite matching; nested groups by backtracking, best number of passing rows wins). An optional
  call that does not match the next actual call is skipped without consuming it.
- Every actual call left over after the sequence is an extra call and fails the case.
- `expectedCall: null` passes only with zero calls. `[]` and `{ordered: []}` behave the same way (zero
  calls pass, any call is extra); our bank always writes `null`.

One deliberate difference: in an `unordered` group with optional members, upstream always consumes as
many actual calls as the group has members, so a skipped optional member swallows the next call. Here the
group consumes only the calls it matched. Without optional members both behave identically.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

JSON_TYPES = ("string", "number", "boolean", "object", "array", "null")
OPERATORS = frozenset({"$pattern", "$contains", "$gt", "$gte", "$lt", "$lte", "$type", "$any"})
_JS_INLINE_FLAGS = {
    "i": re.IGNORECASE,
    "m": re.MULTILINE,
    "s": re.DOTALL,
    "d": 0,
    "g": 0,
    "u": 0,
    "v": 0,
    "y": 0,
}


# ---- values -------------------------------------------------------------------------------------


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_constraint(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(str(key).startswith("$") for key in value)


def compile_pattern(raw: str) -> re.Pattern[str]:
    """A `$pattern` as JavaScript's RegExp would read it, plus a leading `(?flags)` group."""
    flags = 0
    match = re.match(r"^\(\?([a-zA-Z]+)\)", raw)
    if match:
        for letter in match.group(1):
            if letter not in _JS_INLINE_FLAGS:
                raise ValueError(f"unsupported inline flag (?{letter}) in $pattern {raw!r}")
            flags |= _JS_INLINE_FLAGS[letter]
        raw = raw[match.end() :]
    return re.compile(raw, flags)


def _same_primitive(expected: Any, actual: Any) -> bool:
    if is_number(expected) and is_number(actual):
        return expected == actual and not (isinstance(expected, float) and math.isnan(expected))
    return json_type(expected) == json_type(actual) and expected == actual


def _compare(operator: str, actual: Any, operand: Any) -> bool:
    if not is_number(actual) or not is_number(operand):
        return False
    return {
        "$gt": actual > operand,
        "$gte": actual >= operand,
        "$lt": actual < operand,
        "$lte": actual <= operand,
    }[operator]


def matches_constraint(constraint: dict, actual: Any) -> bool:
    for operator, operand in constraint.items():
        if operator == "$pattern":
            if not isinstance(actual, str) or not compile_pattern(operand).search(actual):
                return False
        elif operator == "$contains":
            if isinstance(actual, str):
                if not isinstance(operand, str) or operand not in actual:
                    return False
            elif isinstance(actual, list):
                if not any(matches_value(operand, element) for element in actual):
                    return False
            else:
                return False
        elif operator in ("$gt", "$gte", "$lt", "$lte"):
            if not _compare(operator, actual, operand):
                return False
        elif operator == "$type" and json_type(actual) != operand:
            return False
        # `$any` holds for any present value; unknown operators are ignored (forward compatible).
    return True


def matches_value(expected: Any, actual: Any) -> bool:
    """Does `actual` satisfy `expected` (a literal, a structure, or a constraint object)?"""
    if is_constraint(expected):
        return matches_constraint(expected, actual)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        return all(key in actual and matches_value(value, actual[key]) for key, value in expected.items())
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(expected) != len(actual):
            return False
        return all(matches_value(e, a) for e, a in zip(expected, actual, strict=True))
    return _same_primitive(expected, actual)


# ---- calls and trajectories ---------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call as it happened: name, arguments as sent, result as received (parsed JSON)."""

    functionName: str
    args: Any
    result: Any = None


@dataclass
class Row:
    """One line of a grading: an expected call paired with an actual one (either may be missing)."""

    expected: dict | None
    actual: Call | None
    outcome: str  # "pass" | "fail"
    index: int | None = None  # position of `actual` in the trace

    @property
    def detail(self) -> str:
        if self.outcome == "pass":
            return "-"
        if self.actual is None:
            return f"No tool called (expected {self.expected['functionName']})" if self.expected else "-"
        if self.expected is None:
            return f"Unexpected tool call {self.actual.functionName}"
        if self.expected["functionName"] != self.actual.functionName:
            expected, got = self.expected["functionName"], self.actual.functionName
            return f'Function mismatch (expected "{expected}", got "{got}")'
        if self.expected.get("arguments") is not None and not matches_value(
            self.expected["arguments"], self.actual.args
        ):
            return "Arguments mismatch"
        if "result" in self.expected:
            return "Result mismatch"
        return "Failed"

    def as_dict(self) -> dict:
        return {
            "expected": self.expected,
            "actual": None
            if self.actual is None
            else {"functionName": self.actual.functionName, "args": self.actual.args, "index": self.index},
            "outcome": self.outcome,
            "detail": self.detail,
        }


@dataclass
class Match:
    matches: bool
    consumed: int
    rows: list[Row] = field(default_factory=list)

    @property
    def passes(self) -> int:
        return sum(row.outcome == "pass" for row in self.rows)


def is_ordered(node: Any) -> bool:
    return isinstance(node, dict) and "ordered" in node


def is_unordered(node: Any) -> bool:
    return isinstance(node, dict) and "unordered" in node


def is_call(node: Any) -> bool:
    return isinstance(node, dict) and "functionName" in node


def call_matches(expected: dict, actual: Call) -> bool:
    if expected["functionName"] != actual.functionName:
        return False
    arguments = expected.get("arguments")
    if arguments is not None and not matches_value(arguments, actual.args):
        return False
    return not ("result" in expected and not matches_value(expected["result"], actual.result))


def count_required(nodes: list) -> int:
    total = 0
    for node in nodes:
        if is_ordered(node):
            total += count_required(node["ordered"])
        elif is_unordered(node):
            total += count_required(node["unordered"])
        elif not (is_call(node) and node.get("optional") is True):
            total += 1
    return total


def _row(expected: dict | None, calls: list[Call], index: int | None, outcome: str) -> Row:
    actual = calls[index] if index is not None else None
    return Row(expected, actual, outcome, index)


def match_node(node: Any, calls: list[Call], start: int) -> Match:
    if is_unordered(node):
        return match_unordered(node["unordered"], calls, start)
    if is_ordered(node):
        return match_sequence(node["ordered"], calls, start)
    if is_call(node):
        optional = node.get("optional") is True
        if start >= len(calls):
            if optional:
                return Match(True, 0)
            return Match(False, 1, [_row(node, calls, None, "fail")])
        if call_matches(node, calls[start]):
            return Match(True, 1, [_row(node, calls, start, "pass")])
        if optional:
            return Match(True, 0)
        return Match(False, 1, [_row(node, calls, start, "fail")])
    return Match(False, 0)


def match_sequence(nodes: list, calls: list[Call], start: int) -> Match:
    position, all_match, rows = start, True, []
    for node in nodes:
        result = match_node(node, calls, position)
        all_match = all_match and result.matches
        position += result.consumed
        rows.extend(result.rows)
    return Match(all_match, position - start, rows)


def _bipartite(nodes: list[dict], calls: list[Call], start: int, pool: int) -> dict[int, int]:
    """Maximum matching of the next `pool` calls to the expected calls: {call offset: node index}."""
    edges = [[j for j in range(pool) if call_matches(node, calls[start + j])] for node in nodes]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(nodes)):
        augment(i, set())
    return owner


def match_unordered(nodes: list, calls: list[Call], start: int) -> Match:
    if any(is_ordered(node) or is_unordered(node) for node in nodes):
        return _match_nested_unordered(nodes, calls, start)
    remaining = max(0, len(calls) - start)
    required = [i for i, node in enumerate(nodes) if node.get("optional") is not True]
    widest = min(len(nodes), remaining)
    # Consume as many calls as can all be matched (optional members may stay unmatched).
    for pool in range(widest, len(required) - 1, -1):
        owner = _bipartite(nodes, calls, start, pool)
        if len(owner) == pool and all(i in owner.values() for i in required):
            rows = [_row(nodes[owner[j]], calls, start + j, "pass") for j in range(pool)]
            return Match(True, pool, rows)
    # No complete matching: report it as upstream does, consuming one call per member.
    owner = _bipartite(nodes, calls, start, widest)
    matched = set(owner.values())
    unmatched = [
        node for i, node in enumerate(nodes) if i not in matched and node.get("optional") is not True
    ]
    rows = []
    for j in range(widest):
        if j in owner:
            rows.append(_row(nodes[owner[j]], calls, start + j, "pass"))
        else:
            rows.append(_row(unmatched.pop(0) if unmatched else None, calls, start + j, "fail"))
    rows.extend(_row(node, calls, None, "fail") for node in unmatched)
    return Match(False, len(nodes), rows)


def _match_nested_unordered(nodes: list, calls: list[Call], start: int) -> Match:
    if len(nodes) > 15:
        raise ValueError(f"unordered group too large ({len(nodes)} nodes, at most 15)")
    best: Match | None = None
    cache: dict[tuple[int, int], Match] = {}

    def node_at(i: int, position: int) -> Match:
        if (i, position) not in cache:
            cache[(i, position)] = match_node(nodes[i], calls, position)
        return cache[(i, position)]

    def walk(used: frozenset[int], consumed: int, all_match: bool, rows: list[Row]) -> None:
        nonlocal best
        if len(used) == len(nodes):
            candidate = Match(all_match, consumed, list(rows))
            if best is None or candidate.passes > best.passes:
                best = candidate
            return
        for i in range(len(nodes)):
            if i in used:
                continue
            result = node_at(i, start + consumed)
            walk(used | {i}, consumed + result.consumed, all_match and result.matches, rows + result.rows)

    walk(frozenset(), 0, True, [])
    assert best is not None
    return best


def normalize_expected(expected_call: Any) -> list | None:
    """The case's `expectedCall` as a list of nodes (None stays None)."""
    if expected_call is None:
        return None
    if isinstance(expected_call, list):
        return expected_call
    return [expected_call]


def evaluate_trajectory(expected_call: Any, calls: list[Call]) -> list[Row]:
    """Pair expected and actual calls; the case passes when every row passes."""
    nodes = normalize_expected(expected_call)
    if not nodes:
        if calls:
            return [_row(None, calls, i, "fail") for i in range(len(calls))]
        return [Row(None, None, "pass")] if nodes is None else []
    result = match_sequence(nodes, calls, 0)
    extra = [_row(None, calls, i, "fail") for i in range(result.consumed, len(calls))]
    return result.rows + extra


def flatten_calls(expected_call: Any) -> list[dict]:
    """Every expected call in written order (what smoke mode executes and the stub model replays)."""
    flat: list[dict] = []

    def walk(nodes: list) -> None:
        for node in nodes:
            if is_ordered(node):
                walk(node["ordered"])
            elif is_unordered(node):
                walk(node["unordered"])
            elif is_call(node):
                flat.append(node)

    walk(normalize_expected(expected_call) or [])
    return flat


def operators_in(value: Any) -> set[str]:
    """Every `$` key used anywhere in an expected value (the bank loader checks them)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if str(key).startswith("$"):
                found.add(str(key))
            found |= operators_in(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= operators_in(inner)
    return found


def has_constraint(value: Any) -> bool:
    return bool(operators_in(value)) if value is not None else False


__all__ = [
    "JSON_TYPES",
    "OPERATORS",
    "Call",
    "Row",
    "call_matches",
    "evaluate_trajectory",
    "flatten_calls",
    "matches_value",
    "normalize_expected",
    "operators_in",
]
