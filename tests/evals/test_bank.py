"""The bank: in the webmcp-evals format the CLI reads unchanged, covering the question bank, and strict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.__main__ import main
from evals.bank import CASES_DIR, CATEGORIES, SIDECAR_NAME, BankError, case_files, load_bank
from events.demo_data import DEMO_EVENTS, DEMO_REGISTRATIONS, DEMO_USERS

pytestmark = pytest.mark.unit

UPSTREAM_NODE_KEYS = {"functionName", "arguments", "result", "optional"}
# webmcp-evals' message types (src/types/evals.ts): content, function call and function response
UPSTREAM_MESSAGES = {
    "message": ({"role", "type", "content"}, {"user", "model"}),
    "functioncall": ({"role", "type", "name", "arguments"}, {"model"}),
    "functionresponse": ({"role", "type", "name", "response"}, {"user"}),
}


def upstream_message_ok(message) -> bool:
    keys, roles = UPSTREAM_MESSAGES.get(message.get("type"), (None, ()))
    return set(message) == keys and message["role"] in roles


def upstream_node_ok(node) -> bool:
    if isinstance(node, dict) and set(node) in ({"ordered"}, {"unordered"}):
        return all(upstream_node_ok(inner) for inner in next(iter(node.values())))
    return isinstance(node, dict) and "functionName" in node and set(node) <= UPSTREAM_NODE_KEYS


def test_case_files_are_what_the_webmcp_evals_cli_reads():
    files = case_files()
    assert files and all(path.name != SIDECAR_NAME for path in files)
    for path in files:
        cases = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(cases, list), path
        for case in cases:
            assert set(case) == {"name", "messages", "expectedCall"}, case.get("name")
            assert all(upstream_message_ok(m) for m in case["messages"]), case["name"]
            assert case["messages"][-1]["role"] == "user", case["name"]
            expected = case["expectedCall"]
            assert expected is None or (isinstance(expected, list) and expected), case["name"]
            assert all(upstream_node_ok(node) for node in expected or []), case["name"]


def test_the_bank_covers_every_category_in_both_languages():
    cases = load_bank()
    assert len(cases) >= 20
    for category in CATEGORIES:
        in_category = [case for case in cases if category in case.meta.tags]
        assert in_category, category
    assert {"en", "zh-Hant"} <= {tag for case in cases for tag in case.meta.tags}
    prompts = {case.messages[0]["content"] for case in cases}
    assert "幫我找台北免費的入門活動" in prompts
    assert "高雄有付費的進階 Agent 活動嗎？" in prompts
    zh = [case for case in cases if "zh-Hant" in case.meta.tags]
    assert all(case.meta.locale == "zh-TW" for case in zh), "a Taiwanese visitor sees the zh-Hant page"


def test_no_cases_expect_no_call_and_recovery_cases_block_the_api():
    cases = load_bank()
    no_cases = [case for case in cases if "NO" in case.meta.tags]
    assert len(no_cases) >= 3 and all(case.expectedCall is None for case in no_cases)
    assert {case.meta.route for case in no_cases} >= {"/events/", "/events/evt-webmcp-intro/"}
    for case in (case for case in cases if "RECOVERY" in case.meta.tags):
        assert case.meta.setup["blockApi"]["url"].endswith("/api/events/evt-webmcp-intro")
        first = case.expectedCall[0]
        assert first["result"]["code"] == "TEMPORARY_FAILURE" and first["result"]["retryable"] is True


# ---- conversations on one page, checked against the demo data they rely on --------------------------


def upcoming(query: str = "", **filters: str) -> list[str]:
    """What search_events finds in the seed (events/demo_data.py): published, upcoming (2027), the
    keyword in title or summary, every filter equal — the selector's rules, without a database."""
    return [
        event["public_id"]
        for event in DEMO_EVENTS
        if event["status"] == "published"
        and event["starts_at"].year >= 2027
        and query.casefold() in (event["title"] + event["summary"]).casefold()
        and all(event[key] == value for key, value in filters.items() if value)
    ]


def bank_case(prefix: str):
    return next(case for case in load_bank() if case.name.startswith(prefix))


def test_multi_turn_cases_replay_the_earlier_turns_on_the_same_page():
    cases = load_bank()
    multi = [case for case in cases if case.history()]
    assert {case.name.split(":")[0] for case in multi} == {
        "ARG-04 en",
        "ARG-04 zh-Hant",
        "ARG-06 en",
        "ARG-06 zh-Hant",
    }
    arg01 = bank_case("ARG-01 en").meta.smokeArguments[0]
    for case in multi:
        [earlier] = case.history()
        assert earlier["turn"] == 1 and len(case.user_messages()) == 2, case.name
        assert earlier["functionName"] == "search_events" and earlier["arguments"] == arg01, case.name
        assert earlier["response"]["count"] == 0 and earlier["response"]["requiresUserDecision"] is True
        assert case.meta.route == "/events/" and len(case.smoke_calls()) == 1, case.name
    for language in ("en", "zh-Hant"):
        [same_page] = [case for case in multi if case.name.startswith(f"ARG-06 {language}:")]
        [filtered] = [case for case in cases if case.name.startswith(f"ARG-07 {language}:")]
        assert filtered.meta.route == "/events/?location=kaohsiung" and not filtered.history()
        for case in (same_page, filtered):
            [call] = case.smoke_calls()
            assert call["arguments"] == {"query": "WebMCP"} and case.meta.exactArguments
            [expected] = case.expectedCall
            assert expected["result"]["events"] == [{"id": "evt-webmcp-intro"}]
        assert same_page.meta.allowRelaxAfterZero is True  # a new request, not a looser retry


def test_the_two_turn_arg_04_lets_go_of_the_level_only():
    for language in ("en", "zh-Hant"):
        case = bank_case(f"ARG-04 {language}: zero results, the next message")
        assert case.meta.allowRelaxAfterZero == ("level",) and case.meta.exactArguments
        [expected] = case.expectedCall
        assert set(expected["arguments"]) == {"query", "location", "price"}  # the level is let go
        [call] = case.smoke_calls()
        assert "level" not in call["arguments"]  # left out: no condition under the stateless tool
        assert call["arguments"] == {k: v for k, v in case.history()[0]["arguments"].items() if k != "level"}


def test_the_conversations_rely_on_facts_of_the_demo_data():
    events = {event["public_id"]: event for event in DEMO_EVENTS}
    assert upcoming("WebMCP") == ["evt-webmcp-intro"]  # ARG-06, ARG-07: count 1, this event
    assert events["evt-webmcp-intro"]["location"] == "taipei"  # so a kept Kaohsiung filter hides it
    assert upcoming("WebMCP", location="kaohsiung") == []
    four = {"location": "kaohsiung", "price": "paid", "level": "advanced"}
    assert upcoming("Agent", **four) == []  # ARG-01, and the first turn of ARG-04 / ARG-06
    assert upcoming("Agent", **{**four, "level": ""}) == ["evt-kaohsiung-agent-workflow"]  # ARG-04
    for case in load_bank():
        for step in case.history():
            arguments = dict(step["arguments"])
            found = upcoming(arguments.pop("query", ""), **arguments)
            assert len(found) == step["response"]["count"], case.name


def test_the_waiting_list_cases_rely_on_the_seeded_full_event():
    """WRITE-05..07: the seed's full event, its seats given back first (resetSeats); WRITE-06 and -07
    also free a seat, which a seeded registrant (who cannot sign in) gives up for the case's account."""
    events = {event["public_id"]: event for event in DEMO_EVENTS}
    cases = [case for case in load_bank() if case.meta.setup.get("resetSeats")]
    assert {case.name.split(":")[0] for case in cases} == {
        f"WRITE-0{n} {language}" for n in (5, 6, 7) for language in ("en", "zh-Hant")
    }
    for case in cases:
        setup = case.meta.setup
        event_id = setup["resetSeats"]
        assert case.meta.route == f"/events/{event_id}/" and setup["signedIn"] is True, case.name
        registrants = [user for user, public_id in DEMO_REGISTRATIONS if public_id == event_id]
        assert len(registrants) == events[event_id]["capacity"], "the event is full in the seed"
        assert events[event_id]["status"] == "published" and events[event_id]["starts_at"].year >= 2027
        assert all(user["password"] is None for user in DEMO_USERS if user["username"] in registrants), (
            "no case can sign in as a seeded registrant"
        )
        [expected] = case.expectedCall
        offered = "freeSeat" in setup
        assert offered == (expected["functionName"] != "join_waitlist"), case.name
        if offered:
            assert setup["before"] == [{"functionName": "join_waitlist", "arguments": {}}]
        else:
            assert expected["result"]["position"] == {"$gte": 1} and "before" not in setup
    by_call = {case.expectedCall[0]["functionName"] for case in cases}
    assert by_call == {"join_waitlist", "get_event_details", "register_event"}


def test_every_case_runs_in_smoke_with_concrete_arguments():
    for case in load_bank():
        for call in case.smoke_calls():
            assert "$" not in json.dumps(call["arguments"]), case.name


# ---- the loader refuses what would be misread --------------------------------------------------------

GOOD_CASE = {
    "name": "SEL-x en: a case",
    "messages": [{"role": "user", "content": "Find events in Taipei."}],
    "expectedCall": [{"functionName": "search_events", "arguments": {"location": "taipei"}}],
}
GOOD_META = {"route": "/events/", "tags": ["SEL", "en"]}
JOIN = {"functionName": "join_waitlist", "arguments": {}}


def write_bank(directory: Path, case: dict, meta: dict | None = None, name: str | None = None) -> Path:
    (directory / "cases.json").write_text(json.dumps([case]), encoding="utf-8")
    sidecar = {"cases": {name or case.get("name", "?"): meta if meta is not None else GOOD_META}}
    (directory / SIDECAR_NAME).write_text(json.dumps(sidecar), encoding="utf-8")
    return directory


def test_a_small_bank_loads(tmp_path):
    [case] = load_bank(write_bank(tmp_path, GOOD_CASE))
    assert case.meta.route == "/events/" and case.meta.category == "SEL"
    assert case.upstream() == GOOD_CASE


BROKEN = [
    ("an extra key in a case", {**GOOD_CASE, "route": "/events/"}, GOOD_META, "exactly the keys"),
    ("[] for no call", {**GOOD_CASE, "expectedCall": []}, GOOD_META, "write null"),
    (
        "an unknown operator",
        {**GOOD_CASE, "expectedCall": [{"functionName": "s", "arguments": {"q": {"$regex": "x"}}}]},
        GOOD_META,
        "unknown operators",
    ),
    (
        "a bad pattern",
        {**GOOD_CASE, "expectedCall": [{"functionName": "s", "arguments": {"q": {"$pattern": "("}}}]},
        GOOD_META,
        "bad $pattern",
    ),
    (
        "a NO case that expects a call",
        GOOD_CASE,
        {"route": "/events/", "tags": ["NO", "en"]},
        "expects no call",
    ),
    ("no category", GOOD_CASE, {"route": "/events/", "tags": ["en"]}, "category"),
    ("no language", GOOD_CASE, {"route": "/events/", "tags": ["SEL"]}, "language"),
    ("a route that is not a path", GOOD_CASE, {**GOOD_META, "route": "events"}, "route"),
    ("an unknown sidecar key", GOOD_CASE, {**GOOD_META, "startUrl": "/"}, "unknown sidecar keys"),
    (
        "a functioncall without its functionresponse",
        {
            **GOOD_CASE,
            "messages": [
                {"role": "user", "content": "Find events in Kaohsiung."},
                {"role": "model", "type": "functioncall", "name": "s", "arguments": {}},
                {"role": "user", "content": "Now in Taipei."},
            ],
        },
        GOOD_META,
        "needs its functionresponse next",
    ),
    (
        "a functionresponse for another call",
        {
            **GOOD_CASE,
            "messages": [
                {"role": "user", "content": "Find events in Kaohsiung."},
                {"role": "model", "type": "functioncall", "name": "s", "arguments": {}},
                {"role": "user", "type": "functionresponse", "name": "t", "response": {"result": {}}},
                {"role": "user", "content": "Now in Taipei."},
            ],
        },
        GOOD_META,
        "needs its functionresponse next",
    ),
    (
        "operators in the conversation so far",
        {
            **GOOD_CASE,
            "messages": [
                {"role": "user", "content": "Find events in Kaohsiung."},
                {"role": "model", "type": "functioncall", "name": "s", "arguments": {}},
                {
                    "role": "user",
                    "type": "functionresponse",
                    "name": "s",
                    "response": {"result": {"count": {"$gte": 1}}},
                },
                {"role": "user", "content": "Now in Taipei."},
            ],
        },
        GOOD_META,
        "no operators",
    ),
    (
        "a conversation that does not end with the person",
        {
            **GOOD_CASE,
            "messages": [
                {"role": "user", "content": "Find events in Kaohsiung."},
                {"role": "model", "type": "message", "content": "Here they are."},
            ],
        },
        GOOD_META,
        "last message is the person's",
    ),
    (
        "an unknown message type",
        {**GOOD_CASE, "messages": [{"role": "user", "type": "image", "content": "x"}]},
        GOOD_META,
        "message type",
    ),
    (
        "an unknown condition the person allowed to drop",
        GOOD_CASE,
        {**GOOD_META, "allowRelaxAfterZero": ["date"]},
        "allowRelaxAfterZero",
    ),
    (
        "allowRelaxAfterZero as text",
        GOOD_CASE,
        {**GOOD_META, "allowRelaxAfterZero": "yes"},
        "allowRelaxAfterZero",
    ),
    ("an unknown setup key", GOOD_CASE, {**GOOD_META, "setup": {"signIn": True}}, "unknown setup keys"),
    (
        "an event's seats reset without an event id",
        GOOD_CASE,
        {**GOOD_META, "setup": {"resetSeats": True}},
        "resetSeats is an event's id",
    ),
    (
        "a seat freed for nobody",
        GOOD_CASE,
        {**GOOD_META, "setup": {"resetSeats": "evt-x", "freeSeat": "evt-x", "before": [JOIN]}},
        "needs signedIn",
    ),
    (
        "a seat freed without the line reset first",
        GOOD_CASE,
        {**GOOD_META, "setup": {"signedIn": True, "freeSeat": "evt-x", "before": [JOIN]}},
        "needs resetSeats on the same event",
    ),
    (
        "a seat freed with another event's line reset",
        GOOD_CASE,
        {
            **GOOD_META,
            "setup": {"signedIn": True, "resetSeats": "evt-y", "freeSeat": "evt-x", "before": [JOIN]},
        },
        "needs resetSeats on the same event",
    ),
    (
        "a seat freed for an account not waiting",
        GOOD_CASE,
        {**GOOD_META, "setup": {"signedIn": True, "resetSeats": "evt-x", "freeSeat": "evt-x"}},
        "a join_waitlist call in before",
    ),
    (
        "operators without smoke arguments",
        {**GOOD_CASE, "expectedCall": [{"functionName": "s", "arguments": {"q": {"$pattern": "x"}}}]},
        GOOD_META,
        "give smokeArguments",
    ),
]


@pytest.mark.parametrize(("label", "case", "meta", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_the_loader_refuses(tmp_path, label, case, meta, message):
    with pytest.raises(BankError, match=message.replace("$", r"\$")):
        load_bank(write_bank(tmp_path, case, meta))


def test_a_multi_turn_case_loads_with_its_history(tmp_path):
    case = {
        **GOOD_CASE,
        "messages": [
            {"role": "user", "type": "message", "content": "Find events in Kaohsiung."},
            {"role": "model", "type": "functioncall", "name": "s", "arguments": {"location": "kaohsiung"}},
            {"role": "user", "type": "functionresponse", "name": "s", "response": {"result": {"count": 0}}},
            {"role": "model", "type": "message", "content": "None."},
            {"role": "user", "type": "message", "content": "Taipei then."},
        ],
    }
    [loaded] = load_bank(write_bank(tmp_path, case, {**GOOD_META, "allowRelaxAfterZero": ["location"]}))
    assert loaded.history() == [
        {"functionName": "s", "arguments": {"location": "kaohsiung"}, "response": {"count": 0}, "turn": 1}
    ]
    assert loaded.user_messages() == ["Find events in Kaohsiung.", "Taipei then."]
    assert loaded.meta.allowRelaxAfterZero == ("location",)
    assert loaded.meta.as_dict()["allowRelaxAfterZero"] == ["location"]


def test_a_case_with_a_freed_seat_loads(tmp_path):
    setup = {"resetSeats": "evt-x", "signedIn": True, "before": [JOIN], "freeSeat": "evt-x"}
    [case] = load_bank(write_bank(tmp_path, GOOD_CASE, {**GOOD_META, "setup": setup}))
    assert case.meta.setup == setup and case.meta.as_dict()["setup"] == setup


def test_list_validates_the_seat_steps_too(tmp_path, capsys):
    setup = {"signedIn": True, "before": [JOIN], "freeSeat": "evt-x"}
    bank = write_bank(tmp_path, GOOD_CASE, {**GOOD_META, "setup": setup})
    assert main(["list", "--cases", str(bank)]) == 2
    assert "needs resetSeats on the same event" in capsys.readouterr().err


def test_every_case_needs_a_sidecar_entry_and_every_entry_a_case(tmp_path):
    with pytest.raises(BankError, match="has no entry"):
        load_bank(write_bank(tmp_path, GOOD_CASE, name="another name"))


def test_the_shipped_bank_is_the_default():
    assert CASES_DIR.name == "cases" and (CASES_DIR / SIDECAR_NAME).exists()


def test_the_question_cases_rely_on_the_seeded_questions():
    """WRITE-08, ARG-08, ARG-09: the seeded conference afternoon asks a required dietary need (with
    vegetarian and other), a detail shown only for other, and a photo consent."""
    from events.demo_data import DEMO_QUESTIONS

    cases = [
        case for case in load_bank() if case.name.split(":")[0].split()[0] in ("WRITE-08", "ARG-08", "ARG-09")
    ]
    assert len(cases) == 6 and {case.meta.route for case in cases} == {
        "/events/evt-design-system-components/"
    }
    questions = {q["identifier"]: q for q in DEMO_QUESTIONS["evt-design-system-components"]}
    diet = questions["dietary_need"]
    assert diet["required"] and {"vegetarian", "other"} <= {o["identifier"] for o in diet["options"]}
    assert questions["dietary_other"]["show_if"] == ("dietary_need", ["other"])
    assert questions["photo_consent"]["kind"] == "consent"
    for case in cases:
        calls = [node for node in case.expectedCall if node["functionName"] == "register_event"]
        if case.name.startswith("ARG-08"):
            assert calls == []  # the person gave no dietary need: the agent asks
        else:
            assert set(calls[0]["arguments"]["answers"]) <= set(questions)


def test_the_payment_cases_rely_on_the_seeded_paid_event_and_grade_a_claim_of_registration():
    """WRITE-09, ARG-10: the seeded security workshop sells three types, student at TWD 1,200 (a
    transfer: the seat is held, the person is not registered yet); an answer that says they are
    registered fails the case (model mode), in both languages."""
    from evals.grading import grade
    from evals.matcher import Call
    from events.demo_data import DEMO_TICKET_TYPES

    cases = {case.name: case for case in load_bank() if case.name.split()[0] in ("WRITE-09", "ARG-10")}
    assert len(cases) == 4
    types = {t["identifier"]: t["price"] for t in DEMO_TICKET_TYPES["evt-agent-security-prompt-injection"]}
    assert len(types) == 3 and types["student"] == 1200
    for name, case in cases.items():
        assert case.meta.route == "/events/evt-agent-security-prompt-injection/"
        registers = [node for node in case.expectedCall if node["functionName"] == "register_event"]
        if name.startswith("ARG-10"):
            assert registers == []  # no type named: the agent asks which
            continue
        assert registers[0]["result"]["registration"]["status"] == "pending_payment"
        assert case.meta.answerMustNot
        result = {
            "ok": True,
            "pendingPayment": True,
            "registration": {
                "status": "pending_payment",
                "ticketType": "student",
                "payment": {
                    "amount": 1200,
                    "currency": "TWD",
                    "status": "awaiting",
                    "instructions": {"kind": "bank_transfer"},
                },
            },
        }
        calls = [Call("register_event", {"ticket_type": "student"}, result)]
        claim = "You're registered! See you there." if "en" in case.meta.tags else "報名成功！到時見。"
        honest = (
            "Your seat is held until the deadline: please transfer TWD 1,200 with the reference."
            if "en" in case.meta.tags
            else "座位已為您保留，請在期限前轉帳 TWD 1,200 並附上參考碼。"
        )
        assert grade(case, calls, answer=honest).outcome == "pass"
        failed = grade(case, calls, answer=claim)
        assert failed.outcome == "fail" and failed.violations[0]["rule"] == "claim-in-answer"
        assert grade(case, calls).outcome == "pass"  # smoke mode: no answer to read
