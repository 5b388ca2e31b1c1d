"""Every tool's `outputSchema` describes what it really answers: MCP's rule is that a successful result
of a tool with an output schema carries `structuredContent` that conforms to it. Each tool is called
over `/mcp` (in process, the SDK's own client) on a small catalogue that reaches its answers' shapes
(a payment, a seat held from the waiting list, answers, an attendee checked in), and each success is
validated with jsonschema against the schema `tools/list` gave. The schema is the action row's output
serializer, the one the REST API answers with and the OpenAPI document describes."""

from __future__ import annotations

from typing import Any

import jsonschema
import mcp.types as types
import pytest
from django_webmcp.testing.mcp import mcp_client, run

from core.visitors import Visitor
from events import actions
from events.actions import ACTIONS
from events.choices import StaffRole
from events.models import EventStaff, Registration
from tests.factories import EventFactory, UserFactory, choice_question, paid_event

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

EVERY_SCOPE = ["events:read", "saved:write", "registrations:write", "checkin:write", "payments:write"]


async def _person(context: Any, params: Any) -> types.ElicitResult:
    """The person says yes to every question (a confirmation, the payment page to open)."""
    if getattr(params, "mode", "form") == "url":
        return types.ElicitResult(action="accept")
    return types.ElicitResult(action="accept", content={"confirm": True})


class Session:
    """One connected client that keeps every answer it got, by tool."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.answers: list[tuple[str, dict[str, Any], types.CallToolResult]] = []
        self.tools: dict[str, types.Tool] = {}

    def calls(self, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
        async def session() -> list[types.CallToolResult]:
            async with mcp_client("/mcp", token=self.token, mode="2026-07-28", elicitation=_person) as client:
                self.tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                return [await client.call_tool(name, arguments) for name, arguments in calls]

        results = run(session())
        for (name, arguments), result in zip(calls, results, strict=True):
            assert result.is_error is False, (name, arguments, result.structured_content)
            self.answers.append((name, arguments, result))
        return [result.structured_content for result in results]


@pytest.fixture
def catalogue():
    """A free event asking one question, a paid event managed by alice where bob waits to pay, another
    paid event for alice herself, and a full event whose one seat is bob's."""
    alice = UserFactory(username="alice")
    bob = UserFactory(username="bob", first_name="Bob", last_name="Builder", email="bob@example.org")
    free = EventFactory(public_id="evt-out-free", title="Free workshop", capacity=10)
    choice_question(free, "track", ["web", "data"], required=True)
    managed = paid_event(public_id="evt-out-managed", title="Managed paid workshop", capacity=5)
    EventStaff.objects.create(event=managed, user=alice, role=StaffRole.MANAGER)
    own = paid_event(public_id="evt-out-own", title="Paid workshop", capacity=5, prices={"early": 600})
    full = EventFactory(public_id="evt-out-full", title="Full workshop", capacity=1)
    for event in (managed, full):
        actions.call("register_event", visitor=Visitor(user=bob), channel="ui", event_id=event.public_id)
    return {"alice": alice, "bob": bob, "free": free, "managed": managed, "own": own, "full": full}


def test_every_tool_answers_what_its_output_schema_says(catalogue, token_for):
    session = Session(token_for(catalogue["alice"], scopes=EVERY_SCOPE))
    free, own, full = (catalogue[key].public_id for key in ("free", "own", "full"))
    managed = catalogue["managed"].public_id

    found, nothing, *_ = session.calls(
        ("search_events", {}),
        ("search_events", {"query": "zzz-nothing-matches"}),
        ("get_event_details", {"event_id": free}),
        ("save_event", {"event_id": free}),
        ("save_event", {"event_id": free}),
        ("register_event", {"event_id": free, "answers": {"track": "web"}}),
        ("get_event_details", {"event_id": free}),
        ("register_event", {"event_id": own}),
        ("get_event_details", {"event_id": own}),
        ("join_waitlist", {"event_id": full}),
    )
    assert found["count"] == 4 and nothing["count"] == 0 and nothing["requiresUserDecision"] is True
    bob = catalogue["bob"]
    # Bob frees the full event's seat: it is held for alice, the first person waiting.
    actions.call("cancel_registration", visitor=Visitor(user=bob), channel="ui", event_id=full)
    attendee_id = Registration.objects.get(user=bob, event=catalogue["managed"]).pk
    waiting, details_held, _left, paid, attendees, admitted, again, _cancelled = session.calls(
        ("join_waitlist", {"event_id": full}),
        ("get_event_details", {"event_id": full}),
        ("leave_waitlist", {"event_id": full}),
        ("confirm_payment", {"event_id": managed, "attendee_id": attendee_id}),
        ("find_attendee", {"event_id": managed, "query": "bob"}),
        ("check_in_attendee", {"event_id": managed, "attendee_id": attendee_id}),
        ("check_in_attendee", {"event_id": managed, "attendee_id": attendee_id}),
        ("cancel_registration", {"event_id": free}),
    )
    # The answers reached the shapes the schemas describe: a held seat, a payment, a second check-in.
    assert waiting["alreadyWaiting"] is True and waiting["offer"]["expiresAt"]
    assert details_held["waitlist"]["offer"] is not None
    assert paid["changed"] is True and paid["payment"]["status"] == "paid"
    assert [attendee["attendeeId"] for attendee in attendees["attendees"]] == [attendee_id]
    assert admitted["admitted"] is True and again["alreadyCheckedIn"] is True

    assert {name for name, _arguments, _result in session.answers} == set(session.tools), "call every tool"
    for name, arguments, result in session.answers:
        schema = session.tools[name].output_schema
        assert schema is not None, name
        validator = jsonschema.Draft202012Validator(schema)
        validator.check_schema(schema)
        problems = [error.message for error in validator.iter_errors(result.structured_content)]
        assert problems == [], (name, arguments, problems)


def test_a_tools_output_schema_is_its_rows_output_serializer(catalogue, token_for):
    """One description in one place: the tool's outputSchema has every field the action row's output
    serializer (REST's body) renders, and the envelope's `ok` (required) and `stateVersion`, typed as
    the envelope types them: a refusal carries them too (a null stateVersion), and the TypeScript SDK's
    client validates refusals against the schema as well."""
    session = Session(token_for(catalogue["alice"], scopes=EVERY_SCOPE))
    session.calls()
    for name, tool in session.tools.items():
        schema = tool.output_schema
        assert schema is not None, name
        assert set(ACTIONS[name].output().fields) <= set(schema["properties"]), name
        assert schema["required"] == ["ok"] and schema["properties"]["ok"] == {"type": "boolean"}, name
        assert schema["properties"]["stateVersion"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}, (
            name
        )
