"""The grader against hand-written tables: webmcp-evals value and trajectory semantics, then our rules."""

from __future__ import annotations

import pytest

from evals.bank import Case, CaseMeta, load_bank
from evals.grading import grade
from evals.matcher import Call, evaluate_trajectory, matches_value

pytestmark = pytest.mark.unit

VALUES = [
    # literals: strict JSON equality
    (1, 1, True),
    (1, 1.0, True),
    ("a", "a", True),
    (None, None, True),
    (True, True, True),
    (1, 2, False),
    (True, 1, False),
    (0, False, False),
    ("1", 1, False),
    (None, False, False),
    # objects: subset
    ({"a": 1}, {"a": 1, "b": 2}, True),
    ({"a": 1}, {"b": 1}, False),
    ({"a": 1}, {"a": 2}, False),
    ({"a": {"b": 2}}, {"a": {"b": 2, "c": 3}}, True),
    ({"a": {"b": 2}}, {"a": {"c": 2}}, False),
    ({}, {"x": 1}, True),
    ({}, [], False),
    ({"a": 1}, None, False),
    # arrays: strict length and order, elements matched (objects inside still as subsets)
    ([1, 2], [1, 2], True),
    ([1, 2], [1, 2, 3], False),
    ([1, 2], [2, 1], False),
    ([], [], True),
    ([{"id": "x"}], [{"id": "x", "title": "t"}], True),
    ([{"id": "x"}], [{"id": "x"}, {"id": "y"}], False),
    ([1, [2]], [1, [2]], True),
    ([1], {"0": 1}, False),
    # $pattern: regex search in strings only; leading inline flags
    ({"$pattern": "^2026-\\d{2}$"}, "2026-01", True),
    ({"$pattern": "^2026-\\d{2}$"}, "2025-01", False),
    ({"$pattern": "foo"}, "foobar", True),
    ({"$pattern": "^foo$"}, "foobar", False),
    ({"$pattern": "(?i)^agent$"}, "AGENT", True),
    ({"$pattern": "^agent$"}, "AGENT", False),
    ({"$pattern": ".*"}, 123, False),
    ({"$pattern": ".*"}, None, False),
    # $contains: substring of a string; an element of an array (our extension)
    ({"$contains": "bar"}, "foobar", True),
    ({"$contains": "baz"}, "foobar", False),
    ({"$contains": "/accounts/login/"}, "Sign in at /accounts/login/?next=/x", True),
    ({"$contains": 3}, [1, 2, 3], True),
    ({"$contains": 4}, [1, 2, 3], False),
    ({"$contains": {"id": "evt-a"}}, [{"id": "evt-b"}, {"id": "evt-a", "title": "A"}], True),
    ({"$contains": {"id": "evt-c"}}, [{"id": "evt-b"}], False),
    ({"$contains": {"$pattern": "^evt-"}}, ["x", "evt-a"], True),
    ({"$contains": "foo"}, 123, False),
    ({"$contains": "foo"}, None, False),
    # comparisons: numbers only (a boolean is not a number)
    ({"$gt": 10}, 11, True),
    ({"$gt": 10}, 10, False),
    ({"$gte": 10}, 10, True),
    ({"$gte": 10}, 9.5, False),
    ({"$lt": 10}, 9, True),
    ({"$lt": 10}, 10, False),
    ({"$lte": 10}, 10, True),
    ({"$lte": 10}, 11, False),
    ({"$gt": 10}, "11", False),
    ({"$gte": 0}, True, False),
    ({"$gt": 10}, None, False),
    ({"$gte": 1, "$lt": 5}, 3, True),
    ({"$gte": 1, "$lt": 5}, 5, False),
    # $type: JSON type names
    ({"$type": "string"}, "x", True),
    ({"$type": "number"}, 1.5, True),
    ({"$type": "number"}, True, False),
    ({"$type": "boolean"}, False, True),
    ({"$type": "object"}, {}, True),
    ({"$type": "object"}, [], False),
    ({"$type": "array"}, [], True),
    ({"$type": "array"}, {}, False),
    ({"$type": "null"}, None, True),
    ({"$type": "null"}, 0, False),
    ({"$type": "integer"}, 1, False),
    # $any: present with any value
    ({"$any": True}, None, True),
    ({"a": {"$any": True}}, {"a": None}, True),
    ({"a": {"$any": True}}, {}, False),
    # constraints nested in structures
    ({"a": {"$gt": 10}, "b": {"c": {"$contains": "hello"}}}, {"a": 11, "b": {"c": "hello world"}}, True),
    ({"a": {"$gt": 10}, "b": {"c": {"$contains": "hello"}}}, {"a": 10, "b": {"c": "hello world"}}, False),
    ({"list": [{"$gt": 10}, {"$type": "string"}]}, {"list": [11, "foo"]}, True),
    ({"list": [{"$gt": 10}, {"$type": "string"}]}, {"list": [11, 123]}, False),
    # a mixed object is a structure, not a constraint; unknown operators are ignored (as upstream)
    ({"$gt": 1, "a": 2}, {"$gt": 1, "a": 2}, True),
    ({"$unknown": 1}, "anything", True),
]


@pytest.mark.parametrize(("expected", "actual", "matches"), VALUES)
def test_matches_value(expected, actual, matches):
    assert matches_value(expected, actual) is matches


def call(name: str, result=None, **args) -> Call:
    return Call(name, args, result)


def node(name: str, **extra) -> dict:
    return {"functionName": name, **extra}


A, B, C, X = (node(name, arguments={}) for name in ("a", "b", "c", "x"))


def outcome(expected, calls) -> str:
    rows = evaluate_trajectory(expected, calls)
    return "pass" if all(row.outcome == "pass" for row in rows) else "fail"


TRAJECTORIES = [
    # no call allowed: null, [] and an empty ordered group
    ("null, no call", None, [], "pass"),
    ("null, a call", None, [call("a")], "fail"),
    ("[], no call", [], [], "pass"),
    ("[], a call", [], [call("a")], "fail"),
    ("empty ordered, no call", [{"ordered": []}], [], "pass"),
    ("empty ordered, a call", [{"ordered": []}], [call("a")], "fail"),
    # a plain list is a sequence; a single node is a list of one
    ("sequence in order", [A, B], [call("a"), call("b")], "pass"),
    ("sequence reversed", [A, B], [call("b"), call("a")], "fail"),
    ("sequence missing a call", [A, B], [call("a")], "fail"),
    ("sequence with an extra call", [A, B], [call("a"), call("b"), call("c")], "fail"),
    ("single node", A, [call("a")], "pass"),
    ("explicit ordered group", [{"ordered": [A, B]}, C], [call("a"), call("b"), call("c")], "pass"),
    ("explicit ordered group reversed", [{"ordered": [A, B]}], [call("b"), call("a")], "fail"),
    # unordered: any order, each expected call used once
    ("unordered any order", [{"unordered": [A, B]}], [call("b"), call("a")], "pass"),
    ("unordered same call twice", [{"unordered": [A, B]}], [call("a"), call("a")], "fail"),
    ("unordered then a call", [{"unordered": [A, B]}, C], [call("b"), call("a"), call("c")], "pass"),
    ("unordered missing one", [{"unordered": [A, B]}], [call("b")], "fail"),
    (
        "unordered needs the best pairing, not the first",
        [{"unordered": [node("s", arguments={"q": {"$pattern": "a"}}), node("s", arguments={"q": "ab"})]}],
        [call("s", q="ab"), call("s", q="a")],
        "pass",
    ),
    # optional calls
    ("optional made", [A, node("b", optional=True), C], [call("a"), call("b"), call("c")], "pass"),
    ("optional skipped", [A, node("b", optional=True), C], [call("a"), call("c")], "pass"),
    ("optional at the end, skipped", [A, node("b", optional=True)], [call("a")], "pass"),
    (
        "optional does not excuse another call",
        [A, node("b", optional=True), C],
        [call("a"), call("x"), call("c")],
        "fail",
    ),
    ("optional alone, no call", [node("b", optional=True)], [], "pass"),
    (
        "optional in unordered, skipped",
        [{"unordered": [A, node("b", optional=True)]}, C],
        [call("a"), call("c")],
        "pass",
    ),
    (
        "optional in unordered, made",
        [{"unordered": [A, node("b", optional=True)]}, C],
        [call("b"), call("a"), call("c")],
        "pass",
    ),
    # nested groups
    (
        "ordered inside unordered",
        [{"unordered": [{"ordered": [A, B]}, C]}],
        [call("c"), call("a"), call("b")],
        "pass",
    ),
    (
        "ordered inside unordered, split",
        [{"unordered": [{"ordered": [A, B]}, C]}],
        [call("a"), call("c"), call("b")],
        "fail",
    ),
    # arguments and results
    ("arguments absent: any", [node("a")], [call("a", q="anything")], "pass"),
    ("arguments null: any", [node("a", arguments=None)], [call("a", q="anything")], "pass"),
    (
        "arguments subset",
        [node("s", arguments={"location": "taipei"})],
        [call("s", location="taipei", level="x")],
        "pass",
    ),
    (
        "arguments differ",
        [node("s", arguments={"location": "taipei"})],
        [call("s", location="online")],
        "fail",
    ),
    (
        "result matches",
        [node("a", result={"ok": True})],
        [call("a", result={"ok": True, "count": 2})],
        "pass",
    ),
    ("result differs", [node("a", result={"ok": True})], [call("a", result={"ok": False})], "fail"),
    ("result null means null", [node("a", result=None)], [call("a", result={"ok": True})], "fail"),
    ("function mismatch", [A], [call("b")], "fail"),
]


@pytest.mark.parametrize(
    ("label", "expected", "calls", "result"), TRAJECTORIES, ids=[t[0] for t in TRAJECTORIES]
)
def test_trajectory(label, expected, calls, result):
    assert outcome(expected, calls) == result


def test_rows_say_why_a_call_failed():
    rows = evaluate_trajectory([A, B], [call("b"), call("b"), call("c")])
    assert [row.detail for row in rows] == [
        'Function mismatch (expected "a", got "b")',
        "-",
        "Unexpected tool call c",
    ]
    assert evaluate_trajectory([A], [])[0].detail == "No tool called (expected a)"
    assert (
        evaluate_trajectory([node("a", result={"ok": True})], [call("a", result={})])[0].detail
        == "Result mismatch"
    )
    assert (
        evaluate_trajectory([node("a", arguments={"q": 1})], [call("a", q=2)])[0].detail
        == "Arguments mismatch"
    )


# ---- our rules ------------------------------------------------------------------------------------

ZERO = {"ok": True, "count": 0, "events": []}
FOUND = {"ok": True, "count": 1, "events": [{"id": "evt-x"}]}
FOUR = {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"}


def case(expected, tags=("ARG", "en"), **meta) -> Case:
    return Case(
        "a case", [{"role": "user", "content": "…"}], expected, CaseMeta(route="/events/", tags=tags, **meta)
    )


def searches(*pairs) -> list[Call]:
    return [Call("search_events", args, result) for args, result in pairs]


ANY_SEARCHES = [{"unordered": [node("search_events", optional=True)] * 3}]

RELAXATION = [
    ("level dropped", [(FOUR, ZERO), ({**FOUR, "level": None}, ZERO)], True),
    ("level dropped as empty string", [(FOUR, ZERO), ({**FOUR, "level": ""}, ZERO)], True),
    ("location changed", [(FOUR, ZERO), ({**FOUR, "location": "taipei"}, FOUND)], True),
    ("keyword dropped", [(FOUR, ZERO), ({k: v for k, v in FOUR.items() if k != "query"}, FOUND)], True),
    ("keyword reworded, filters kept", [(FOUR, ZERO), ({**FOUR, "query": "AI Agent"}, ZERO)], False),
    ("same search again", [(FOUR, ZERO), (FOUR, ZERO)], False),
    ("a filter added", [(FOUR, ZERO), ({**FOUR, "query": "Agent Evals"}, ZERO)], False),
    ("filter value case and spaces", [(FOUR, ZERO), ({**FOUR, "location": " Kaohsiung "}, ZERO)], False),
    ("looser after a search that found something", [(FOUR, FOUND), ({"query": "Agent"}, FOUND)], False),
    (
        "looser after a failure is not after zero",
        [(FOUR, {"ok": False, "code": "TEMPORARY_FAILURE"}), ({}, FOUND)],
        False,
    ),
    ("dropped two searches later", [(FOUR, ZERO), (FOUR, ZERO), ({"query": "Agent"}, FOUND)], True),
]


@pytest.mark.parametrize(("label", "pairs", "violated"), RELAXATION, ids=[r[0] for r in RELAXATION])
def test_relaxed_after_zero(label, pairs, violated):
    graded = grade(case(ANY_SEARCHES), searches(*pairs))
    rules = {violation["rule"] for violation in graded.violations}
    assert ("relaxed-after-zero" in rules) is violated
    assert graded.outcome == ("fail" if violated else "pass")


def test_relaxing_is_fine_when_the_person_said_so():
    pairs = [(FOUR, ZERO), ({**FOUR, "level": ""}, FOUND)]
    assert grade(case(ANY_SEARCHES, allowRelaxAfterZero=True), searches(*pairs)).outcome == "pass"
    assert grade(case(ANY_SEARCHES), searches(*pairs)).outcome == "fail"


def test_relaxing_fails_even_where_the_trajectory_allows_the_extra_search():
    expected = [
        node("search_events", arguments={"location": "kaohsiung"}, result={"count": 0}),
        node("search_events", optional=True),
    ]
    graded = grade(
        case(expected), searches(({"location": "kaohsiung", "level": "advanced"}, ZERO), ({}, FOUND))
    )
    assert all(row.outcome == "pass" for row in graded.rows)
    assert graded.outcome == "fail"
    assert graded.reasons[0].startswith("relaxed-after-zero: call 1 searched again after call 0")


def test_no_case_passes_only_without_any_call():
    no_case = case(None, tags=("NO", "en"))
    assert grade(no_case, []).outcome == "pass"
    graded = grade(no_case, [Call("search_events", {}, FOUND)])
    assert graded.outcome == "fail"
    assert "no-call-allowed" in {violation["rule"] for violation in graded.violations}


def test_exact_arguments_refuse_an_invented_condition():
    expected = [node("search_events", arguments={"location": "taipei", "price": "free"})]
    invented = [Call("search_events", {"location": "taipei", "price": "free", "query": "活動"}, FOUND)]
    assert grade(case(expected), invented).outcome == "pass"  # subset matching alone accepts it
    graded = grade(case(expected, exactArguments=True), invented)
    assert graded.outcome == "fail"
    assert graded.violations[0]["rule"] == "invented-argument"
    empty_values = [
        Call("search_events", {"location": "taipei", "price": "free", "query": "", "level": None}, FOUND)
    ]
    assert grade(case(expected, exactArguments=True), empty_values).outcome == "pass"


# ---- conversations over several turns: the earlier turns replayed, the last one graded --------------

TWO_TURNS = [
    {"role": "user", "type": "message", "content": "A paid, advanced Agent event in Kaohsiung?"},
    {"role": "model", "type": "functioncall", "name": "search_events", "arguments": FOUR},
    {
        "role": "user",
        "type": "functionresponse",
        "name": "search_events",
        "response": {"result": {"ok": True, "count": 0}},
    },
    {"role": "model", "type": "message", "content": "None matches all four. Change one?"},
    {"role": "user", "type": "message", "content": "Any level is fine."},
]
REPLAYED = [Call("search_events", FOUR, ZERO)]
WITHOUT = {key: {k: v for k, v in FOUR.items() if k != key} for key in FOUR}


def two_turns(expected=ANY_SEARCHES, **meta) -> Case:
    return Case("two turns", TWO_TURNS, expected, CaseMeta(route="/events/", tags=("ARG", "en"), **meta))


def rules(graded) -> set[str]:
    return {violation["rule"] for violation in graded.violations}


def test_the_earlier_turns_must_have_answered_as_the_conversation_says():
    case = two_turns(allowRelaxAfterZero=("level",))
    last_turn = searches((WITHOUT["level"], FOUND))
    assert grade(case, last_turn, REPLAYED).outcome == "pass"
    differs = {
        "not replayed": None,
        "answered differently": [Call("search_events", FOUR, FOUND)],
        "replayed as get_event_details": [Call("get_event_details", FOUR, ZERO)],
        "failed": [Call("search_events", FOUR, None)],  # an error leaves no result
    }
    for problem, replayed in differs.items():
        graded = grade(case, last_turn, replayed)
        assert graded.outcome == "fail" and rules(graded) == {"history-differs"}, problem
    assert grade(case, last_turn, None).reasons == [
        "history-differs: earlier-turn call 0 (search_events, after message 1) was not replayed"
    ]


ACROSS_TURNS = [
    ("the level the person let go", ("level",), WITHOUT["level"], False),
    ("the level as an empty string", ("level",), {**FOUR, "level": ""}, False),
    (
        "the level and the price",
        ("level",),
        {k: v for k, v in WITHOUT["level"].items() if k != "price"},
        True,
    ),
    ("the location changed", ("level",), {**WITHOUT["level"], "location": "taipei"}, True),
    ("the keyword dropped", ("level",), {k: v for k, v in WITHOUT["level"].items() if k != "query"}, True),
    ("the level without the person's say-so", False, WITHOUT["level"], True),
    ("a new request the case allows", True, {"query": "WebMCP"}, False),
    ("a new request the case does not allow", False, {"query": "WebMCP"}, True),
]


@pytest.mark.parametrize(
    ("label", "allowed", "args", "violated"), ACROSS_TURNS, ids=[a[0] for a in ACROSS_TURNS]
)
def test_a_zero_result_of_an_earlier_turn_binds_the_last_one(label, allowed, args, violated):
    graded = grade(two_turns(allowRelaxAfterZero=allowed), searches((args, FOUND)), REPLAYED)
    assert ("relaxed-after-zero" in rules(graded)) is violated
    if violated:
        assert "after the earlier turn's call (history 0) found nothing" in graded.reasons[0]


def test_the_permission_covers_only_what_the_person_let_go():
    """Any level is fine: dropping the level is allowed; finding nothing again and then dropping the
    price too is relaxing without the person's say-so."""
    last_turn = searches((WITHOUT["level"], ZERO), (WITHOUT["level"] | {"price": ""}, FOUND))
    graded = grade(two_turns(allowRelaxAfterZero=("level",)), last_turn, REPLAYED)
    assert graded.outcome == "fail"
    assert graded.violations[0]["callIndex"] == 1 and "changing price" in graded.violations[0]["detail"]


# The bank's own multi-turn cases, against what the site answers before and after search_events
# became stateless (results shaped as the live ones, reduced to what the cases look at).
ZERO_LIVE = {**ZERO, "appliedFilters": FOUR, "constraintsRelaxed": False, "requiresUserDecision": True}
WEBMCP = {"ok": True, "count": 1, "events": [{"id": "evt-webmcp-intro", "location": "taipei"}]}
WORKFLOW = {"ok": True, "count": 1, "events": [{"id": "evt-kaohsiung-agent-workflow"}]}
STALE_FORM = {"ok": True, "count": 0, "events": [], "appliedFilters": {**FOUR, "query": "WebMCP"}}


def bank_case(prefix: str) -> Case:
    return next(case for case in load_bank() if case.name.startswith(prefix))


@pytest.mark.parametrize("language", ["en", "zh-Hant"])
def test_arg_06_a_new_search_after_zero_results_must_find_webmcp(language):
    case = bank_case(f"ARG-06 {language}")
    replayed = [Call("search_events", FOUR, ZERO_LIVE)]
    assert grade(case, searches(({"query": "WebMCP"}, WEBMCP)), replayed).outcome == "pass"
    with_empties = {"query": "WebMCP", "location": "", "price": None}
    assert grade(case, searches((with_empties, WEBMCP)), replayed).outcome == "pass"
    # The bug being fixed: the form kept kaohsiung, paid, advanced and the keyword search found nothing.
    stale = grade(case, searches(({"query": "WebMCP"}, STALE_FORM)), replayed)
    assert stale.outcome == "fail" and stale.reasons == ["Result mismatch"]
    # An agent that carries the earlier conditions over fails too, whatever the site answers.
    carried = {**FOUR, "query": "WebMCP"}
    assert grade(case, searches((carried, STALE_FORM)), replayed).outcome == "fail"
    assert rules(grade(case, searches((carried, WEBMCP)), replayed)) == {"invented-argument"}


@pytest.mark.parametrize("language", ["en", "zh-Hant"])
def test_arg_07_a_keyword_search_on_a_filtered_page_must_find_webmcp(language):
    case = bank_case(f"ARG-07 {language}")
    assert case.meta.route == "/events/?location=kaohsiung"
    assert grade(case, searches(({"query": "WebMCP"}, WEBMCP))).outcome == "pass"
    stale = {
        "ok": True,
        "count": 0,
        "events": [],
        "appliedFilters": {"query": "WebMCP", "location": "kaohsiung"},
    }
    assert grade(case, searches(({"query": "WebMCP"}, stale))).outcome == "fail"


@pytest.mark.parametrize("language", ["en", "zh-Hant"])
def test_arg_04_two_turns_any_level_after_zero_results(language):
    case = bank_case(f"ARG-04 {language}: zero results, the next message")
    replayed = [Call("search_events", FOUR, ZERO_LIVE)]
    for second in (WITHOUT["level"], {**FOUR, "level": ""}, {**FOUR, "level": None}):
        assert grade(case, searches((second, WORKFLOW)), replayed).outcome == "pass", second
    kept_level = grade(case, searches((FOUR, ZERO_LIVE)), replayed)
    assert kept_level.outcome == "fail" and kept_level.reasons == ["Result mismatch"]
    other_level = grade(case, searches(({**FOUR, "level": "intermediate"}, WORKFLOW)), replayed)
    assert other_level.outcome == "fail" and "invented-argument" in rules(other_level)
    too_loose = {k: v for k, v in WITHOUT["level"].items() if k != "price"}
    graded = grade(case, searches((too_loose, FOUND)), replayed)
    assert graded.outcome == "fail" and "relaxed-after-zero" in rules(graded)
    # The same relaxation in the first turn, before the person allowed it, is ARG-01's failure.
    first_turn = grade(bank_case("ARG-01 en"), searches((FOUR, ZERO_LIVE), (WITHOUT["level"], WORKFLOW)))
    assert first_turn.outcome == "fail" and "relaxed-after-zero" in rules(first_turn)
