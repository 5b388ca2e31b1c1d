"""The OpenAI-compatible client against the STUB model service, without a browser.

The stub replaces an outside model service, which cannot run here; these tests pin what the client sends
(messages, tools, bearer key) and what each scripted policy answers.
"""

from __future__ import annotations

import json

import pytest

from evals.bank import load_bank
from evals.model import ChatClient, ModelConfig, ModelError, chat_messages, strip_combinators, tool_specs
from evals.stub_model import StubModelServer

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


def conversation(prefix: str) -> list[dict]:
    case = next(case for case in load_bank() if case.name.startswith(prefix))
    return [{"role": "system", "content": "page…"}, *chat_messages(case.messages)]


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
    assert config.public() == {"baseUrl": "http://127.0.0.1:9/v1", "model": "x", "apiKeySet": True}
