"""The OpenAI-compatible client against the STUB model service, without a browser.

The stub replaces an outside model service, which cannot run here; these tests pin what the client sends
(messages, tools, bearer key) and what each scripted policy answers.
"""

from __future__ import annotations

import json

import pytest

from evals.bank import load_bank
from evals.grading import grade
from evals.matcher import Call
from evals.model import ChatClient, ModelConfig, ModelError, chat_messages, strip_combinators, tool_specs
from evals.stub_model import Script, StubModelServer

pytestmark = pytest.mark.integration

SEARCH_TOOL = {
    "name": "search_events",
    "description": "Search events.",
    "inputSchema": {
        "type": "object",
        "properties": {"level": {"type": "string", "enum": ["", "advanced"], "anyOf": [{"const": ""}]}},
        "additionalProperties": False,
    },
    "annotations": {"readOnly": True},
}
DETAILS_TOOL = {"name": "get_event_details", "description": "Details.", "inputSchema": {"type": "object"}}


@pytest.fixture(scope="module")
def stub():
    with StubModelServer() as server:
        yield server


def client(stub, model: str, key: str = "") -> ChatClient:
    return ChatClient(ModelConfig(base_url=stub.base_url, model=model, api_key=key))


def bank_case(prefix: str):
    return next(case for case in load_bank() if case.name.startswith(prefix))


def conversation(prefix: str, url: str | None = None) -> list[dict]:
    system = "page…" if url is None else f"The page:\nURL: {url}\nTitle: Events"
    return [{"role": "system", "content": system}, *chat_messages(bank_case(prefix).messages)]


def tool_message(call_id: str, result: dict) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}


def test_tools_are_offered_in_the_chat_completions_shape_without_combinators():
    [spec] = tool_specs([SEARCH_TOOL])
    assert spec["type"] == "function" and spec["function"]["name"] == "search_events"
    assert spec["function"]["parameters"]["properties"]["level"] == {
        "type": "string",
        "enum": ["", "advanced"],
    }
    assert tool_specs([{"name": "x", "description": "d", "inputSchema": None}])[0]["function"][
        "parameters"
    ] == {
        "type": "object",
        "properties": {},
    }
    assert strip_combinators({"oneOf": [1], "a": [{"anyOf": []}]}) == {"a": [{}]}


def test_good_policy_makes_the_expected_call_then_answers(stub):
    chat = client(stub, "stub-good", key="secret")
    messages = conversation("SEL-01 zh-Hant")
    reply = chat.complete(messages, tool_specs([SEARCH_TOOL]))
    [call] = reply["tool_calls"]
    assert call["function"]["name"] == "search_events"
    assert json.loads(call["function"]["arguments"]) == {
        "location": "taipei",
        "price": "free",
        "level": "beginner",
    }
    sent = stub.requests[-1]
    assert sent["authorization"] == "Bearer secret"
    assert sent["body"]["tools"][0]["function"]["name"] == "search_events"
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        tool_message(call["id"], {"ok": True}),
    ]
    final = chat.complete(messages, tool_specs([SEARCH_TOOL]))
    assert not final.get("tool_calls") and final["content"].startswith("stub: done")


def test_relaxing_policy_drops_the_level_after_zero_results(stub):
    chat = client(stub, "stub-relax-after-zero")
    messages = conversation("ARG-01 en")
    first = chat.complete(messages, tool_specs([SEARCH_TOOL]))["tool_calls"][0]
    zero = {"ok": True, "count": 0, "events": []}
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [first]},
        tool_message(first["id"], zero),
    ]
    second = chat.complete(messages, tool_specs([SEARCH_TOOL]))["tool_calls"][0]
    assert "level" in json.loads(first["function"]["arguments"])
    assert json.loads(second["function"]["arguments"]) == {
        "query": "Agent",
        "location": "kaohsiung",
        "price": "paid",
    }


FOUR = {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"}
ZERO = {"ok": True, "count": 0, "events": []}


def arguments(reply: dict) -> dict:
    [call] = reply["tool_calls"]
    return json.loads(call["function"]["arguments"])


def test_good_policy_plays_the_last_turn_of_a_conversation_on_one_page(stub):
    """The earlier turn is in the request (the runner replayed it on the page); the stub answers the
    person's last message — and the first message alone is still ARG-01's conversation."""
    chat = client(stub, "stub-good")
    messages = conversation("ARG-06 en")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == FOUR
    assert json.loads(messages[3]["content"])["count"] == 0
    assert arguments(chat.complete(messages, tool_specs([SEARCH_TOOL]))) == {"query": "WebMCP"}
    assert arguments(chat.complete(conversation("ARG-06 zh-Hant"), [])) == {"query": "WebMCP"}
    assert arguments(chat.complete(conversation("ARG-01 en"), [])) == FOUR
    any_level = chat.complete(conversation("ARG-04 en: zero results, the next"), [])
    assert arguments(any_level) == {k: v for k, v in FOUR.items() if k != "level"}


def test_the_same_request_on_another_page_is_another_case():
    script = Script(load_bank())
    on_list = script.case_for(conversation("ARG-07 en", "http://127.0.0.1:8000/events/"))
    on_filtered = script.case_for(
        conversation("ARG-07 en", "http://127.0.0.1:8000/events/?location=kaohsiung")
    )
    assert on_list.name.startswith("ARG-02 en") and on_filtered.name.startswith("ARG-07 en")


def test_the_stub_knows_every_case_of_the_bank_by_its_conversation_and_page():
    """Scripts come from the bank, so a new case needs nothing in the stub, as long as what the person
    says (or, where two cases say the same, the page) tells it apart."""
    script = Script(load_bank())
    for case in load_bank():
        system = f"The page:\nURL: http://127.0.0.1:8000{case.meta.route}\nTitle: Events"
        found = script.case_for([{"role": "system", "content": system}, *chat_messages(case.messages)])
        assert found is not None and found.name == case.name
    claim = next(case for case in load_bank() if case.name.startswith("WRITE-07 zh-Hant"))
    messages = [{"role": "system", "content": "page…"}, *chat_messages(claim.messages)]
    reply = script.reply("stub-good", messages, [])
    [call] = reply["tool_calls"]
    assert call["function"]["name"] == "register_event" and json.loads(call["function"]["arguments"]) == {}


def test_relaxing_policy_goes_past_what_the_person_allowed_and_the_grader_fails_it(stub):
    """ARG-04 over two turns: the person let the level go. Should that search find nothing too, the
    relaxing policy drops the price next, which nobody allowed."""
    case = bank_case("ARG-04 en: zero results, the next")
    chat = client(stub, "stub-relax-after-zero")
    messages = conversation(case.name)
    first = chat.complete(messages, [])["tool_calls"][0]
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [first]},
        tool_message(first["id"], ZERO),
    ]
    second = chat.complete(messages, [])["tool_calls"][0]
    made = [json.loads(call["function"]["arguments"]) for call in (first, second)]
    without_level = {k: v for k, v in FOUR.items() if k != "level"}
    assert made == [without_level, {"query": "Agent", "location": "kaohsiung"}]
    replayed = [Call("search_events", FOUR, case.history()[0]["response"])]  # as the site answered
    graded = grade(
        case, [Call("search_events", made[0], ZERO), Call("search_events", made[1], ZERO)], replayed
    )
    assert graded.outcome == "fail"
    assert [v["rule"] for v in graded.violations] == ["relaxed-after-zero"]
    assert "changing price" in graded.violations[0]["detail"]
    found = {"ok": True, "count": 1, "events": [{"id": "evt-kaohsiung-agent-workflow"}]}
    assert grade(case, [Call("search_events", made[0], found)], replayed).outcome == "pass"


def test_chatty_policy_calls_a_tool_for_small_talk(stub):
    reply = client(stub, "stub-tool-for-small-talk").complete(
        conversation("NO-01 en"), tool_specs([SEARCH_TOOL, DETAILS_TOOL])
    )
    assert reply["tool_calls"][0]["function"]["name"] == "get_event_details"  # first tool needing no input
    good = client(stub, "stub-good").complete(conversation("NO-01 en"), tool_specs([SEARCH_TOOL]))
    assert not good.get("tool_calls")


def test_an_unknown_model_is_a_model_error(stub):
    with pytest.raises(ModelError, match="HTTP 400"):
        client(stub, "gpt-unknown").complete(conversation("NO-01 en"), [])


def test_model_mode_needs_its_environment(monkeypatch):
    monkeypatch.delenv("EVALS_BASE_URL", raising=False)
    monkeypatch.setenv("EVALS_MODEL", "x")
    with pytest.raises(ModelError, match="EVALS_BASE_URL"):
        ModelConfig.from_env()
    monkeypatch.setenv("EVALS_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("EVALS_API_KEY", "k")
    config = ModelConfig.from_env()
    assert config.base_url == "http://127.0.0.1:9/v1"
    public = config.public()
    assert {key: public[key] for key in ("baseUrl", "model", "apiKeySet")} == {
        "baseUrl": "http://127.0.0.1:9/v1",
        "model": "x",
        "apiKeySet": True,
    }
    assert public["settings"] == {
        "temperature": 0.0,
        "seed": 1234,
        "maxTokens": 512,
        "timeoutSeconds": 180.0,
        "attemptsPerRequest": 1,
    }
    monkeypatch.setenv("EVALS_TIMEOUT", "soon")
    with pytest.raises(ModelError, match="EVALS_TIMEOUT must be a number"):
        ModelConfig.from_env()


def test_every_request_carries_max_tokens_temperature_and_seed_and_returns_its_tokens(stub):
    """A small model may write until its context is full without a token limit; temperature 0 and a
    fixed seed make a run repeatable. The tokens an answer cost come back with it."""
    before = len(stub.requests)
    reply, usage = client(stub, "stub-good").exchange(conversation("NO-01 en"), tool_specs([SEARCH_TOOL]))
    [sent] = stub.requests[before:]
    assert sent["body"]["max_tokens"] == 512
    assert sent["body"]["temperature"] == 0.0 and sent["body"]["seed"] == 1234
    assert usage["prompt"] > 0 and usage["completion"] > 0
    assert reply["content"]


def test_a_request_that_hangs_is_cut_off_with_a_clear_error_and_not_repeated():
    """An endpoint that does not answer ends the case after the time limit, once: no retry."""
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            accepted.append(connection)  # read nothing, answer nothing

    threading.Thread(target=accept, daemon=True).start()
    port = listener.getsockname()[1]
    config = ModelConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(ModelError, match=r"did not answer within 0.5 s \(EVALS_TIMEOUT\)"):
            ChatClient(config).complete(conversation("NO-01 en"), [])
    finally:
        listener.close()
    assert time.monotonic() - started < 5
    assert len(accepted) == 1
