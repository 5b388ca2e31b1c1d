"""STUB model service: a small, deterministic OpenAI-compatible `/v1/chat/completions` for tests.

It is not a model. It stands in for an outside model service, which cannot run here, so that CI can
exercise model mode end to end — the request the runner sends, the tool calls executed on the page, the
tool results fed back, the step loop, the trace and the grader. Its answers are scripted from the bank
itself; the `model` field of a request picks the script:

- `stub-good` — makes exactly the case's expected calls (smoke arguments where the case uses operators),
  one per step, then answers. Every case should pass.
- `stub-relax-after-zero` — like `stub-good`, but after a search of the current turn that found nothing
  it searches again without the level, then without the price (the seeds' ARG-01 attempt 1). The
  grader must fail it wherever the person did not let those conditions go (ARG-01; ARG-04 only allows
  the level).
- `stub-tool-for-small-talk` — like `stub-good`, but when the case expects no call it calls a tool
  anyway (the first offered tool that needs no argument, with `{}`). The grader must fail it.

Over MCP (`--via mcp`) a tool about one event requires `event_id` where the page's tool took `{}`; the
stub then gives the id of the page in the system prompt's URL (`/events/<id>/`), as a good agent would.

A conversation is recognised by everything the person said in it (so a multi-turn case whose first
message is another case's only message gets its own script), and where two cases say the same on
different pages, by the page's URL in the system prompt. The earlier turns of a multi-turn case are
already in the request (the runner replayed them); the script plays the last one.

Run it by hand: `python -m evals.stub_model --port 8799`, then
`EVALS_BASE_URL=http://127.0.0.1:8799/v1 EVALS_MODEL=stub-good python -m evals model`.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .bank import Case, load_bank
from .grading import is_zero_result
from .model import chat_messages

POLICIES = ("stub-good", "stub-relax-after-zero", "stub-tool-for-small-talk")
RELAX_ORDER = ("level", "price", "location")


def _user_texts(messages: list[dict]) -> tuple[str, ...]:
    """What the person said, in order: the key of a conversation."""
    return tuple(
        m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)
    )


def _page(messages: list[dict]) -> str | None:
    """Path and query of the page the system prompt describes (`URL: …`)."""
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None) or ""
    found = re.search(r"^URL: (\S+)", system, re.MULTILINE)
    if not found:
        return None
    url = urlsplit(found.group(1))
    return url.path + (f"?{url.query}" if url.query else "")


def with_page_event(name: str, arguments: Any, tools: list[dict], page: str | None) -> Any:
    """Over MCP a tool about one event takes `event_id` explicitly, where the page's route-bound tool took
    `{}`: when the offered tool requires it and the script's call lacks it, the event is the one of the
    page the person has open (`/events/<id>/` in the system prompt's URL), as a good agent reads it."""
    spec = next((tool["function"] for tool in tools if tool.get("function", {}).get("name") == name), None)
    required = ((spec or {}).get("parameters") or {}).get("required") or []
    found = re.match(r"^/events/(evt-[a-z0-9-]+)/", page or "")
    if "event_id" in required and isinstance(arguments, dict) and "event_id" not in arguments and found:
        return {**arguments, "event_id": found.group(1)}
    return arguments


def _since_last_user(messages: list[dict]) -> list[dict]:
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return messages[last + 1 :]


class Script:
    """Decides the next assistant message for a conversation, given the bank."""

    def __init__(self, cases: list[Case]) -> None:
        self.by_conversation: dict[tuple[str, ...], list[Case]] = {}
        for case in cases:
            self.by_conversation.setdefault(_user_texts(chat_messages(case.messages)), []).append(case)

    def case_for(self, messages: list[dict]) -> Case | None:
        candidates = self.by_conversation.get(_user_texts(messages), [])
        if len(candidates) > 1:
            page = _page(messages)
            candidates = [case for case in candidates if case.meta.route == page] or candidates
        return candidates[0] if candidates else None

    def reply(self, policy: str, messages: list[dict], tools: list[dict]) -> dict:
        case = self.case_for(messages)
        turn = _since_last_user(messages)
        made = [call for m in turn if m.get("role") == "assistant" for call in m.get("tool_calls") or []]
        results = [m for m in turn if m.get("role") == "tool"]
        planned = case.smoke_calls() if case else []
        if policy == "stub-tool-for-small-talk" and not planned and not made:
            offered = sorted(tools, key=lambda tool: tool["function"]["name"])
            free = [tool for tool in offered if not tool["function"].get("parameters", {}).get("required")]
            if free:
                return self._call(free[0]["function"]["name"], {}, len(made))
        if policy == "stub-relax-after-zero":
            relaxed = self._relax(made, results)
            if relaxed is not None:
                return (
                    relaxed if relaxed else self._answer("stub: nothing matched, even with fewer conditions")
                )
        if len(made) < len(planned):
            nxt = planned[len(made)]
            arguments = with_page_event(nxt["functionName"], nxt["arguments"], tools, _page(messages))
            return self._call(nxt["functionName"], arguments, len(made))
        return self._answer(f"stub: done after {len(made)} call(s)" if case else "stub: unknown conversation")

    def _relax(self, made: list[dict], results: list[dict]) -> dict | None:
        """After a zero-result search: the next looser search ({} when out of filters); else None."""
        searches = [
            (call, result)
            for call, result in zip(made, results, strict=False)
            if call["function"]["name"] == "search_events"
        ]
        zero_seen = any(is_zero_result(_json(result.get("content"))) for _, result in searches)
        if not zero_seen:
            return None
        last_args = _json(searches[-1][0]["function"].get("arguments")) or {}
        if not is_zero_result(_json(searches[-1][1].get("content"))):
            return {}
        for key in RELAX_ORDER:
            if last_args.get(key):
                looser = {k: v for k, v in last_args.items() if k != key}
                return self._call("search_events", looser, len(made))
        return {}

    @staticmethod
    def _call(name: str, arguments: Any, position: int) -> dict:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{position + 1}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
                }
            ],
        }

    @staticmethod
    def _answer(text: str) -> dict:
        return {"role": "assistant", "content": text}


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return None


class StubModelServer:
    """`with StubModelServer() as stub: stub.base_url` — the stub on 127.0.0.1, in a thread."""

    def __init__(self, cases: Path | str | None = None, port: int = 0) -> None:
        self.script = Script(load_bank(cases))
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread: threading.Thread | None = None

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._send(
                        200, {"object": "list", "data": [{"id": p, "object": "model"} for p in POLICIES]}
                    )
                else:
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

            def do_POST(self) -> None:
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length).decode("utf-8"))
                except ValueError:
                    self._send(
                        400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}}
                    )
                    return
                with stub._lock:
                    stub.requests.append({"body": body, "authorization": self.headers.get("Authorization")})
                policy = body.get("model")
                if policy not in POLICIES:
                    self._send(
                        400,
                        {
                            "error": {
                                "message": f"unknown model {policy!r}; the stub knows {POLICIES}",
                                "type": "invalid_request_error",
                            }
                        },
                    )
                    return
                message = stub.script.reply(policy, body.get("messages") or [], body.get("tools") or [])
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                # No tokenizer here: the stub counts a token per four bytes of JSON, so that a run's
                # token figures are non-zero and grow with what is sent, as a model's do.
                prompt = len(json.dumps([body.get("messages"), body.get("tools")]).encode()) // 4
                completion = len(json.dumps(message).encode()) // 4
                self._send(
                    200,
                    {
                        "id": f"stub-{len(stub.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": policy,
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                        },
                    },
                )

        return Handler

    def start(self) -> str:
        # A short poll: stop() (shutdown) waits for the loop to look, 0.5 s with the default.
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="stub-model", daemon=True
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StubModelServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m evals.stub_model", description="STUB model service for tests"
    )
    parser.add_argument("--port", type=int, default=8799)
    parser.add_argument("--cases", type=Path)
    args = parser.parse_args(argv)
    stub = StubModelServer(args.cases, args.port)
    print(f"STUB model service (not a model) at {stub.base_url}; models: {', '.join(POLICIES)}", flush=True)
    try:
        stub.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stub.httpd.server_close()


if __name__ == "__main__":
    main()
