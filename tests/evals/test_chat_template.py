"""The chat template `make evals-model` serves the local model with (evals/chat_template.jinja), rendered
with Jinja as llama.cpp renders it: no model is needed.

llama.cpp learns the model's call format from the template's rendering of an assistant's tool call, and
parses the model's output by it; without it the model writes calls as text and the server returns no
`tool_calls`. So the rendering of a call turn and of a result turn is what these tests pin.
"""

from __future__ import annotations

import json
import re

import jinja2
import pytest

from evals.local_model import TEMPLATE
from evals.model import chat_messages, tool_specs

pytestmark = pytest.mark.unit

SEARCH = {
    "name": "search_events",
    "description": "Search events.",
    "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
}
CALL_BLOCK = re.compile(r"```json\n(\{.*?\})\n```", re.DOTALL)


def render(messages: list[dict], tools: list[dict] | None = None) -> str:
    template = jinja2.Environment().from_string(TEMPLATE.read_text(encoding="utf-8"))
    return template.render(messages=messages, tools=tools, add_generation_prompt=True)


def conversation() -> list[dict]:
    """A system prompt, the person's message, the model's call and its result, in the runner's shape."""
    return [
        {"role": "system", "content": "You act for the person."},
        *chat_messages(
            [
                {"role": "user", "type": "message", "content": "Find WebMCP events."},
                {
                    "role": "model",
                    "type": "functioncall",
                    "name": "search_events",
                    "arguments": {"query": "WebMCP"},
                },
                {
                    "role": "user",
                    "type": "functionresponse",
                    "name": "search_events",
                    "response": {"result": {"ok": True, "count": 1}},
                },
            ]
        ),
    ]


def turns(text: str) -> list[tuple[str, str]]:
    return re.findall(r"<\|im_start\|>(\w+)\n(.*?)(?:<\|im_end\|>|\Z)", text, re.DOTALL)


def test_the_system_turn_lists_the_tools_and_asks_for_fenced_json_calls():
    text = render(conversation(), tool_specs([SEARCH]))
    role, system = turns(text)[0]
    assert role == "system"
    assert '"name": "search_events"' in system and "You act for the person." in system
    assert system.index("search_events") < system.index("You act for the person.")  # tools first: cached
    assert "```json" in system and '{"name": "<function name>", "arguments":' in system
    assert "plain text" in system


def test_a_tool_call_turn_is_one_fenced_json_block_of_name_and_arguments():
    text = render(conversation(), tool_specs([SEARCH]))
    role, body = turns(text)[2]
    assert role == "assistant"
    [block] = CALL_BLOCK.findall(body)
    assert json.loads(block) == {"name": "search_events", "arguments": {"query": "WebMCP"}}
    assert body.strip() == f"```json\n{block}\n```"  # nothing else: the format llama.cpp learns


def test_arguments_given_as_an_object_render_the_same_as_a_json_string():
    messages = conversation()
    messages[2]["tool_calls"][0]["function"]["arguments"] = {"query": "WebMCP"}
    [block] = CALL_BLOCK.findall(turns(render(messages))[2][1])
    assert json.loads(block)["arguments"] == {"query": "WebMCP"}


def test_a_tool_result_turn_is_a_user_turn_with_the_result_in_tool_response():
    text = render(conversation(), tool_specs([SEARCH]))
    role, body = turns(text)[3]
    assert role == "user"
    found = re.fullmatch(r"<tool_response>\n(.*)\n</tool_response>\n", body, re.DOTALL)
    assert found and json.loads(found.group(1)) == {"ok": True, "count": 1}
    assert text.endswith("<|im_start|>assistant\n")  # the model's turn follows


def test_two_results_in_a_row_share_one_user_turn():
    messages = conversation()
    messages.append({"role": "tool", "tool_call_id": "x", "content": '{"ok": false}'})
    role, body = turns(render(messages))[3]
    assert role == "user" and body.count("<tool_response>") == 2


def test_without_tools_there_is_no_tool_section():
    text = render([{"role": "system", "content": "Hi."}, {"role": "user", "content": "Hello"}])
    assert "# Tools" not in text and "```json" not in text
