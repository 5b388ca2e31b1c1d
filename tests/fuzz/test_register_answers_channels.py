"""Hypothesis: the random question sets and answers of test_register_answers.py, sent the way each
interface's caller sends them: REST (`POST /api/events/<id>/registration`, signed in by the session with
its CSRF token, or by a bearer token), the page's WebMCP tool (`register_event`'s request as the
runtime builds it from the page's manifest: its endpoint, headers and JSON body) and MCP (`tools/call
register_event` in-process, a preview and then the call with its confirmation, as a client without
elicitation does). Every answer is a registration or a refusal from the contract (never a 500, never a
JSON-RPC error); a refusal of the answers names each one (`answers.<identifier>`); a refusal writes
nothing (no registration, no seat, no stateVersion rise, no Activity row of a write), and a
registration is one seat, its answers only what the form asks, with one Activity row of its channel.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from hypothesis import given, note, settings

from accounts.tokens import create_access_token
from core.visitors import Visitor
from events.models import Activity, Event, Registration
from events.questions import form_of
from events.scopes import READ, REGISTRATIONS_WRITE
from events.selectors import state_version
from tests.factories import UserFactory
from tests.fuzz.test_register_answers import answer_sets, build_event, question_sets

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

#: Modest: each channel runs this many cases (the action row's own test runs more, test_register_answers.py).
EXAMPLES = 25
CSRF = "k" * 32  # Django takes the unmasked secret as the header's token
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
MANIFEST = re.compile(r'<script id="webmcp-manifest" type="application/json">(.*?)</script>', re.S)
ISLAND = re.compile(r'<script id="webmcp-result" type="application/json">(.*?)</script>', re.S)
#: The reasons an INVALID_INPUT refusal of this call may give: the answers (each named), the body's
#: shape (the serializer's), an unreadable body.
REASONS = {"ANSWERS_INVALID", "VALIDATION_ERROR", "MALFORMED_REQUEST", "UNKNOWN_PARAMETER"}


def strict_json(value: Any) -> Any:
    """What JSON.stringify (the page's runtime) and an MCP client's JSON send: no NaN or Infinity (null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: strict_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [strict_json(item) for item in value]
    return value


# ── the callers: each sends the answers its own way and says what came back ─────────────────────

Outcome = tuple[str, dict[str, Any]]  # ("registered" | "refused", the body the caller read)


def rest(client: Client, headers: dict[str, str]) -> Callable[[Event, dict], Outcome]:
    def send(event: Event, answers: dict) -> Outcome:
        body = json.dumps({"answers": answers})  # Python's JSON: NaN and Infinity go as they are
        response = client.post(
            f"/api/events/{event.public_id}/registration",
            body,
            content_type="application/json",
            headers=headers,
        )
        assert response.status_code in (201, 400), (response.status_code, response.content[:400])
        return ("registered" if response.status_code == 201 else "refused"), response.json()

    return send


def webmcp(client: Client) -> Callable[[Event, dict], Outcome]:
    """The page's `register_event` tool as the runtime calls it (webmcp.js buildRequest): the tool's
    endpoint and method from the page's manifest, the route's values filled in, the input as JSON."""

    def send(event: Event, answers: dict) -> Outcome:
        page = f"/events/{event.public_id}/"
        html = client.get(page).content.decode()
        [manifest] = MANIFEST.findall(html)
        tool = {tool["name"]: tool for tool in json.loads(manifest)["tools"]}["register_event"]
        values = tool.get("routeValues", {})
        url = re.sub(r"\{([^}]+)\}", lambda match: values[match.group(1)], tool["endpoint"])
        headers = {
            "Accept": "text/html, application/json",
            "X-Client-Mode": "agent",
            "X-WebMCP-Tool": "register_event",
            "X-WebMCP-Page": f"http://testserver{page}",
            "X-CSRFToken": CSRF,
        }
        assert tool["method"] == "POST"
        body = json.dumps({"answers": strict_json(answers)})
        response = client.post(url, body, content_type="application/json", headers=headers)
        if response.status_code == 200:  # the region redrawn, with the result's island
            assert response["Content-Type"].startswith("text/html"), response.content[:400]
            [island] = ISLAND.findall(response.content.decode())
            return "registered", json.loads(island)
        assert response.status_code == 400, (response.status_code, response.content[:400])
        return "refused", response.json()

    return send


def mcp(client: Client, token: str) -> Callable[[Event, dict], Outcome]:
    """`tools/call register_event` over /mcp: without elicitation the tool answers its preview with a
    confirmation (nothing written yet), and the same call with it registers."""
    headers = MCP_HEADERS | {"Authorization": f"Bearer {token}"}

    def call(arguments: dict) -> dict:
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "register_event", "arguments": arguments},
        }
        response = client.post("/mcp", json.dumps(request), content_type="application/json", headers=headers)
        assert response.status_code == 200, (response.status_code, response.content[:400])
        answer = json.loads(response.content)
        assert "result" in answer, answer  # never a JSON-RPC error (an internal one above all)
        return answer["result"]

    def send(event: Event, answers: dict) -> Outcome:
        arguments = {"event_id": event.public_id, "answers": strict_json(answers)}
        before = write_state(event)
        first = call(arguments)
        content = first["structuredContent"]
        if first.get("isError") and content["code"] != "CONFIRMATION_REQUIRED":
            return "refused", content
        assert write_state(event) == before, "a preview wrote something"
        if not first.get("isError"):
            return "registered", content  # nothing to confirm (it cannot be: the event is new to them)
        confirmed = call({**arguments, "confirmation": content["confirmation"]})
        return ("refused" if confirmed.get("isError") else "registered"), confirmed["structuredContent"]

    return send


# ── what is checked, whatever the channel ──────────────────────────────────────────────────────


def write_state(event: Event) -> tuple:
    """What a refusal leaves alone on the event: its registrations, its seat count, its Activity rows
    other than a refusal's."""
    return (
        frozenset(Registration.objects.filter(event=event).values_list("pk", "status")),
        Event.objects.get(pk=event.pk).seats_taken,
        Activity.objects.filter(event=event, action="register_event").exclude(outcome__in=REFUSED).count(),
    )


#: The outcomes of refusals (their reasons), as Activity rows keep them; any other is a write's.
REFUSED = REASONS | {"CONFIRMATION_REQUIRED"}


def check_registration_or_refusal(
    send: Callable[[Event, dict], Outcome], person: Visitor, mode: str, seen: Counter[str]
) -> Callable[..., None]:
    @settings(max_examples=EXAMPLES)
    @given(questions=question_sets, answers=answer_sets)
    def check(questions: list[dict[str, Any]], answers: dict[str, Any]) -> None:
        event = build_event(questions)
        note(f"form={event.question_form!r}")
        version = state_version(visitor=person)
        before = write_state(event)
        outcome, body = send(event, answers)
        note(f"{outcome}: {body!r}")
        seen[outcome if outcome == "registered" else body.get("reason", "")] += 1
        if outcome == "refused":
            assert body["ok"] is False
            assert (body["code"], body["reason"]) in {("INVALID_INPUT", reason) for reason in REASONS}, body
            if body["reason"] == "ANSWERS_INVALID":
                assert body["fields"] and all(key.startswith("answers.") for key in body["fields"]), body
            assert write_state(event) == before, "a refused call wrote something"
            assert state_version(visitor=person) == version
            return
        assert body["ok"] is True, body
        registration = Registration.objects.get(event=event, user=person.user)
        asked = {q.identifier for q in form_of(event.question_form) if not q.staff_only}
        assert set(registration.answers) <= asked
        assert set(body["registration"]["answers"]) <= asked
        assert Event.objects.get(pk=event.pk).seats_taken == 1
        written = Activity.objects.filter(event=event, action="register_event").exclude(outcome__in=REFUSED)
        assert list(written.values_list("mode", flat=True)) == [mode]
        assert state_version(visitor=person) > version

    return check


def run_channel(send: Callable[[Event, dict], Outcome], person: Visitor, mode: str) -> None:
    """The cases through one channel; they must have reached both ends (a registration, and a refusal
    of the answers), else the run proved nothing about that channel."""
    seen: Counter[str] = Counter()
    check_registration_or_refusal(send, person, mode, seen)()
    print(f"\n{mode}: {dict(seen)}")
    assert seen["registered"] and seen["ANSWERS_INVALID"], seen


@pytest.fixture
def person(db) -> Visitor:
    return Visitor(user=UserFactory(username="answers-fuzzer"))


def token_of(person: Visitor) -> str:
    assert person.user is not None
    scopes = [READ, REGISTRATIONS_WRITE]
    return str(create_access_token(user=person.user, name="answers fuzz", scopes=scopes, days=1)[1])


def signed_in(person: Visitor) -> Client:
    """A browser's session: signed in, with the CSRF cookie its pages set (checked on every write)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(person.user)
    client.cookies["csrftoken"] = CSRF
    return client


def test_rest_signed_in(person, writes_unthrottled):
    run_channel(rest(signed_in(person), {"X-CSRFToken": CSRF}), person, "api")


def test_rest_bearer(person, writes_unthrottled):
    run_channel(rest(Client(), {"Authorization": f"Bearer {token_of(person)}"}), person, "api")


def test_webmcp_tool_call(person, writes_unthrottled):
    run_channel(webmcp(signed_in(person)), person, "agent")


def test_mcp_tools_call(person, writes_unthrottled, in_process_wsgi):
    run_channel(mcp(Client(), token_of(person)), person, "mcp")
