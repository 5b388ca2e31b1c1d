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
#: A turn with more calls than this ends the case unplayed (`stoppedBy: too-many-calls`): the small
#: model sometimes writes the same call 29 to 61 times in one turn until its token limit, and
#: every result then goes into the next prompt (3 to 7 minutes a case on this machine, a failure
#: whatever follows). No case of the bank needs more than three calls in a turn.
MAX_CALLS_PER_TURN = 8
#: A call refused this many times with the same arguments is not made again: the case ends
#: (`stoppedBy: repeated-refusal`). One identical retry stays possible (a call that failed once may
#: succeed the second time, RECOVERY-02); the same refusal a third time only repeats the answer.
REFUSALS_BEFORE_STOP = 2

SYSTEM_PROMPT = """You are an assistant acting for a person on the web page they have open, through the tools
{tools_from}. Call a tool only when you need it to do what the person asked, and make no more calls
than needed. Use only the tools offered. When a tool result tells you what to do next (nextAction), follow
it. Answer from the page below only when it shows the answer; to find, check or change anything else, use
the tools. Whatever language the person writes in, you look up, save, register, cancel or check in only
by calling a tool: never say one of these was done unless a tool result above says so. Answer the person
in the language they wrote in.

Today's date is {today}.

The page the person is looking at:
URL: {url}
Title: {title}
"""

#: Over WebMCP the agent sees the page: its visible text follows, cut to this many characters. A small
#: model's context is 8,192 tokens, and a zh-Hant character is about one token: the first screen of the
#: page (its heading, the event's facts or the list's first results) is what the person is looking at.
PAGE_TEXT_FOR_MODEL = 1_500

PAGE_TEXT = """Visible text (the start of the page's main region, may be cut short):
{text}
"""

#: Defaults of a request: always a token limit (a small model may otherwise write until the context is
#: full); temperature 0 and a fixed seed, so a run can be repeated; and a time limit per request, so a
#: request that hangs ends the case with a clear error instead of holding the run.
DEFAULT_MAX_TOKENS = 512
DEFAULT_SEED = 1234
DEFAULT_TIMEOUT = 180.0


class ModelError(RuntimeError):
    """The model endpoint could not be used (configuration, network, or an unusable answer)."""


def _env_number(name: str, default: float, kind: type = float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError as error:
        raise ModelError(f"{name} must be a number, not {raw!r}") from error
    if value <= 0:
        raise ModelError(f"{name} must be above 0, not {raw!r}")
    return value


@dataclass(frozen=True)
class ModelConfig:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = DEFAULT_TIMEOUT  # seconds per request
    temperature: float | None = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = DEFAULT_SEED

    @classmethod
    def from_env(cls) -> ModelConfig:
        base_url = os.environ.get("EVALS_BASE_URL", "").strip()
        model = os.environ.get("EVALS_MODEL", "").strip()
        if not base_url or not model:
            raise ModelError(
                "model mode needs EVALS_BASE_URL (e.g. https://api.openai.com/v1) and EVALS_MODEL; "
                "EVALS_API_KEY is sent as a bearer token when set"
            )
        return cls(
            base_url=base_url.rstrip("/"),
            model=model,
            api_key=os.environ.get("EVALS_API_KEY", ""),
            timeout=_env_number("EVALS_TIMEOUT", DEFAULT_TIMEOUT),
            max_tokens=int(_env_number("EVALS_MAX_TOKENS", DEFAULT_MAX_TOKENS, int)),
            seed=int(_env_number("EVALS_SEED", DEFAULT_SEED, int)),
        )

    def public(self) -> dict:
        """What a report may say about the model (never the key), settings included."""
        return {
            "baseUrl": self.base_url,
            "model": self.model,
            "apiKeySet": bool(self.api_key),
            "settings": {
                "temperature": self.temperature,
                "seed": self.seed,
                "maxTokens": self.max_tokens,
                "timeoutSeconds": self.timeout,
                "attemptsPerRequest": 1,
            },
        }


def usage_of(data: dict) -> dict[str, int]:
    """Prompt and completion tokens of one answer, as the endpoint counted them (0 when it does not)."""
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    return {
        "prompt": int(usage.get("prompt_tokens") or 0),
        "completion": int(usage.get("completion_tokens") or 0),
    }


class ChatClient:
    """One request per model turn, never repeated: a case the endpoint fails is an error, not a retry
    until something passes. A request that takes longer than `timeout` seconds is cut off."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    def complete(self, messages: list[dict], tools: list[dict]) -> dict:
        return self.exchange(messages, tools)[0]

    def exchange(self, messages: list[dict], tools: list[dict]) -> tuple[dict, dict[str, int]]:
        """The assistant's message and the tokens it cost (`usage_of`)."""
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
        }
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.seed is not None:
            body["seed"] = self.config.seed
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        request = urllib.request.Request(
            f"{self.config.base_url}/chat/completions",
            data=json.dumps(body).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout) as response:
                data = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")[:500]
            raise ModelError(f"the model endpoint answered HTTP {error.code}: {detail}") from error
        except TimeoutError as error:
            raise ModelError(
                f"the model endpoint did not answer within {self.config.timeout:g} s "
                f"(EVALS_TIMEOUT); the request was cut off"
            ) from error
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise ModelError(
                    f"the model endpoint did not answer within {self.config.timeout:g} s "
                    f"(EVALS_TIMEOUT); the request was cut off"
                ) from error
            raise ModelError(f"the model endpoint could not be reached: {error.reason}") from error
        except (OSError, ValueError) as error:
            seconds = time.monotonic() - started
            raise ModelError(f"the model endpoint failed after {seconds:.0f} s: {error}") from error
        try:
            return data["choices"][0]["message"], usage_of(data)
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
    """What the agent knows before the person speaks. Over WebMCP it sees the page: the start of its
    visible text follows the URL and title. Over MCP a client has no page, so the prompt names the
    page the person has open (URL and title: an event's id is in its URL) and nothing of its text."""
    tools_from = TOOLS_FROM.get(via, TOOLS_FROM["webmcp"])
    prompt = SYSTEM_PROMPT.format(
        today=dt.date.today().isoformat(),
        tools_from=tools_from,
        url=page_context.get("url", ""),
        title=page_context.get("title", ""),
    )
    if via != "mcp":
        prompt += PAGE_TEXT.format(text=(page_context.get("text") or "")[:PAGE_TEXT_FOR_MODEL])
    return prompt


def run_agent(
    client: ChatClient, case_page, case_messages: list[dict], max_steps: int, trace: dict | None = None
) -> dict:
    """The loop. Fills `trace` as it goes (so a failure midway keeps what happened): prompt, steps,
    calls, final answer, and why it stopped: `answer`, `step-limit`, `too-many-calls` (a turn of more
    than MAX_CALLS_PER_TURN calls, none made) or `repeated-refusal` (a call refused
    REFUSALS_BEFORE_STOP times sent again, not made). The last three end without an answer, so the
    case fails as it would have at the step limit, minutes sooner."""
    prompt = system_prompt(case_page.context_text(), getattr(case_page, "via", "webmcp"))
    messages: list[dict] = [{"role": "system", "content": prompt}, *chat_messages(case_messages)]
    trace = trace if trace is not None else {}
    trace.update(
        prompt={"system": prompt, "messages": copy.deepcopy(messages[1:])},
        steps=[],
        calls=[],
        finalAnswer=None,
        stoppedBy="step-limit",
        tokens={"prompt": 0, "completion": 0, "largestPrompt": 0, "requests": 0},
    )
    refusals: dict[str, int] = {}  # each call (name and arguments) refused, and how often
    for step in range(max_steps):
        tools = case_page.tools()
        specs = tool_specs(tools)
        reply, usage = client.exchange(messages, specs)
        tokens = trace["tokens"]
        tokens["prompt"] += usage["prompt"]
        tokens["completion"] += usage["completion"]
        tokens["largestPrompt"] = max(tokens["largestPrompt"], usage["prompt"])
        tokens["requests"] += 1
        tool_calls = reply.get("tool_calls") or []
        trace["steps"].append(
            {
                "step": step,
                "toolsOffered": [spec["function"]["name"] for spec in specs],
                "assistant": {"content": reply.get("content"), "tool_calls": tool_calls},
                "tokens": usage,
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
        if len(tool_calls) > MAX_CALLS_PER_TURN:
            trace["stoppedBy"] = "too-many-calls"
            break
        for tool_call in tool_calls:
            function = tool_call.get("function") or {}
            name = function.get("name", "")
            raw = function.get("arguments") or "{}"
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                args = raw
            if refusals.get(_call_key(name, args), 0) >= REFUSALS_BEFORE_STOP:
                trace["stoppedBy"] = "repeated-refusal"
                return trace
            if isinstance(args, dict) or args is None:
                record = case_page.call(name, args or {})
            else:
                record = CallRecord(name, args, error=f"arguments are not a JSON object: {str(raw)[:200]}")
            if _refused(record):
                key = _call_key(name, args)
                refusals[key] = refusals.get(key, 0) + 1
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


def _call_key(name: str, args: Any) -> str:
    return name + json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def _refused(record: CallRecord) -> bool:
    """A call that failed or was refused (the envelope's `ok: false`)."""
    return record.error is not None or (isinstance(record.result, dict) and record.result.get("ok") is False)
