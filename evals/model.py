"""An OpenAI-compatible chat-completions client (stdlib only) and the agent loop that uses the page.

Each step offers the page's live tools (name, description, input schema from `page.webmcp.tools()`; via
MCP, from the site's `tools/list`), executes the tool calls the model makes on the page (via MCP, with
the SDK client), feeds each result back as a `tool` message, and
stops at the model's answer or at the step limit. Everything said and done is kept in the trace.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from .browser import CallRecord

DEFAULT_MAX_STEPS = 8

SYSTEM_PROMPT = """You are an assistant acting for a person on the web page they have open, through the tools
{tools_from}. Call a tool only when you need it to do what the person asked, and make no more calls
than needed. Use only the tools offered. When a tool result tells you what to do next (nextAction), follow
it. Answer the person in the language they wrote in.

Today's date is {today}.

The page the person is looking at:
URL: {url}
Title: {title}
Visible text (may be cut short):
{text}
"""


class ModelError(RuntimeError):
    """The model endpoint could not be used (configuration, network, or an unusable answer)."""


@dataclass(frozen=True)
class ModelConfig:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 120.0
    temperature: float | None = 0.0

    @classmethod
    def from_env(cls) -> ModelConfig:
        base_url = os.environ.get("EVALS_BASE_URL", "").strip()
        model = os.environ.get("EVALS_MODEL", "").strip()
        if not base_url or not model:
            raise ModelError(
                "model mode needs EVALS_BASE_URL (e.g. https://api.openai.com/v1) and EVALS_MODEL; "
                "EVALS_API_KEY is sent as a bearer token when set"
            )
        return cls(base_url=base_url.rstrip("/"), model=model, api_key=os.environ.get("EVALS_API_KEY", ""))

    def public(self) -> dict:
        """What a report may say about the model (never the key)."""
        return {"baseUrl": self.base_url, "model": self.model, "apiKeySet": bool(self.api_key)}


class ChatClient:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def complete(self, messages: list[dict], tools: list[dict]) -> dict:
        body: dict[str, Any] = {"model": self.config.model, "messages": messages}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        request = urllib.request.Request(
            f"{self.config.base_url}/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        last_error = ""
        for attempt in range(3):
            try:
                with urllib.request.urlopen(request, timeout=self.config.timeout) as response:
                    data = json.loads(response.read().decode("utf-8"))
                break
            except urllib.error.HTTPError as error:
                last_error = f"HTTP {error.code}: {error.read().decode('utf-8', 'replace')[:500]}"
                if error.code not in (408, 429, 500, 502, 503, 504):
                    raise ModelError(last_error) from error
            except (OSError, ValueError) as error:
                last_error = f"{type(error).__name__}: {error}"
            time.sleep(2 * (attempt + 1))
        else:
            raise ModelError(f"the model endpoint failed three times; last: {last_error}")
        try:
            return data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError) as error:
            raise ModelError(f"no choices[0].message in the answer: {str(data)[:500]}") from error


def strip_combinators(schema: Any) -> Any:
    """Drop anyOf/oneOf as webmcp-evals does before offering a schema (enum and type stay)."""
    if isinstance(schema, list):
        return [strip_combinators(item) for item in schema]
    if isinstance(schema, dict):
        return {
            key: strip_combinators(value) for key, value in schema.items() if key not in ("anyOf", "oneOf")
        }
    return schema


def tool_specs(tools: list[dict]) -> list[dict]:
    """The page's tools in the chat-completions `tools` shape."""
    specs = []
    for tool in tools:
        schema = tool.get("inputSchema")
        if isinstance(schema, str):
            try:
                schema = json.loads(schema)
            except ValueError:
                schema = None
        if not isinstance(schema, dict) or not schema:
            schema = {"type": "object", "properties": {}}
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description", ""),
                    "parameters": strip_combinators(copy.deepcopy(schema)),
                },
            }
        )
    return specs


def chat_messages(case_messages: list[dict]) -> list[dict]:
    """webmcp-evals messages in the chat-completions shape (function calls and responses included)."""
    out: list[dict] = []
    for position, message in enumerate(case_messages):
        kind = message.get("type", "message")
        if kind == "functioncall":
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"history-{position}",
                            "type": "function",
                            "function": {
                                "name": message["name"],
                                "arguments": json.dumps(message.get("arguments", {}), ensure_ascii=False),
                            },
                        }
                    ],
                }
            )
        elif kind == "functionresponse":
            response = message.get("response", {})
            call_id = next(
                (call["id"] for item in reversed(out) for call in item.get("tool_calls", [])),
                f"history-{position}",
            )
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": json.dumps(
                        response.get("result", response) if isinstance(response, dict) else response,
                        ensure_ascii=False,
                    ),
                }
            )
        else:
            role = "assistant" if message["role"] == "model" else message["role"]
            out.append({"role": role, "content": message.get("content", "")})
    return out


#: Where the tools come from, by path: the page's own (WebMCP), or the site's MCP server (`--via mcp`).
TOOLS_FROM = {"webmcp": "that page provides", "mcp": "the site provides over MCP"}


def system_prompt(page_context: dict, via: str = "webmcp") -> str:
    tools_from = TOOLS_FROM.get(via, TOOLS_FROM["webmcp"])
    return SYSTEM_PROMPT.format(today=dt.date.today().isoformat(), tools_from=tools_from, **page_context)


def run_agent(
    client: ChatClient, case_page, case_messages: list[dict], max_steps: int, trace: dict | None = None
) -> dict:
    """The loop. Fills `trace` as it goes (so a failure midway keeps what happened): prompt, steps,
    calls, final answer, and why it stopped."""
    prompt = system_prompt(case_page.context_text(), getattr(case_page, "via", "webmcp"))
    messages: list[dict] = [{"role": "system", "content": prompt}, *chat_messages(case_messages)]
    trace = trace if trace is not None else {}
    trace.update(
        prompt={"system": prompt, "messages": copy.deepcopy(messages[1:])},
        steps=[],
        calls=[],
        finalAnswer=None,
        stoppedBy="step-limit",
    )
    for step in range(max_steps):
        tools = case_page.tools()
        specs = tool_specs(tools)
        reply = client.complete(messages, specs)
        tool_calls = reply.get("tool_calls") or []
        trace["steps"].append(
            {
                "step": step,
                "toolsOffered": [spec["function"]["name"] for spec in specs],
                "assistant": {"content": reply.get("content"), "tool_calls": tool_calls},
            }
        )
        if step == 0:
            trace["toolsOffered"] = specs
        assistant = {"role": "assistant", "content": reply.get("content")}
        if tool_calls:
            assistant["tool_calls"] = tool_calls
        messages.append(assistant)
        if not tool_calls:
            trace["finalAnswer"] = reply.get("content") or ""
            trace["stoppedBy"] = "answer"
            break
        for tool_call in tool_calls:
            function = tool_call.get("function") or {}
            name = function.get("name", "")
            raw = function.get("arguments") or "{}"
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                args = raw
            if isinstance(args, dict) or args is None:
                record = case_page.call(name, args or {})
            else:
                record = CallRecord(name, args, error=f"arguments are not a JSON object: {str(raw)[:200]}")
            record_dict = record.as_dict()
            record_dict["step"] = step
            record_dict["toolCallId"] = tool_call.get("id")
            trace["calls"].append(record_dict)
            content = record.result if record.error is None else {"error": record.error}
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": tool_call.get("id", ""),
                    "content": json.dumps(content, ensure_ascii=False),
                }
            )
    return trace
