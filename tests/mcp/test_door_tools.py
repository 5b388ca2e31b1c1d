"""The door's tools over `/mcp`: listed with their scope (checkin:write), called with a token of the
event's door staff; check_in_attendee asks first (its preview names the person), and never takes a
ticket code."""

from __future__ import annotations

import json

import pytest

from core.visitors import Visitor
from events import actions
from events.choices import StaffRole
from events.models import Activity, CheckIn, EventStaff, Registration
from tests.factories import EventFactory, UserFactory

from .conftest import MODES, connect, raw_call, run

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

DOOR = ["checkin:write"]


@pytest.fixture
def door():
    event = EventFactory(public_id="evt-mcp-door", title="Door over MCP", capacity=10)
    staff = UserFactory(username="mcp-door", first_name="Mei")
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    ada = UserFactory(username="ada", first_name="Ada", last_name="Lovelace", email="ada@example.org")
    actions.call("register_event", visitor=Visitor(user=ada), channel="ui", event_id=event.public_id)
    return event, staff, Registration.objects.get(user=ada, event=event)


def test_tools_list_shows_the_door_tools_with_their_scope(mcp_url):
    async def listed():
        async with connect(mcp_url) as client:
            return await client.list_tools()

    tools = {tool.name: tool for tool in run(listed()).tools}
    find, check_in = tools["find_attendee"], tools["check_in_attendee"]
    assert find.annotations.read_only_hint is True and find.meta["untrustedContentHint"] is True
    assert set(find.input_schema["properties"]) == {"event_id", "query"}
    assert find.input_schema["required"] == ["event_id"]
    # Over MCP the event is explicit; a ticket code is no input of the tool (only the scanners' API).
    assert set(check_in.input_schema["properties"]) == {"event_id", "attendee_id", "confirmation"}
    assert check_in.input_schema["required"] == ["event_id", "attendee_id"]
    assert check_in.annotations.read_only_hint is False
    for tool in (find, check_in):
        assert tool.meta["securitySchemes"] == [{"type": "oauth2", "scopes": ["checkin:write"]}], tool.name


@pytest.mark.parametrize("mode", MODES)
def test_door_staff_find_then_check_in_after_the_preview(mcp_url, mode, door, token_for):
    event, staff, ada = door
    token = token_for(staff, scopes=DOOR)

    async def ask():
        async with connect(mcp_url, token=token, mode=mode) as client:
            found = await client.call_tool("find_attendee", {"event_id": event.public_id, "query": "love"})
            attendee_id = found.structured_content["attendees"][0]["attendeeId"]
            arguments = {"event_id": event.public_id, "attendee_id": attendee_id}
            return found, arguments, await client.call_tool("check_in_attendee", arguments)

    async def confirm(arguments, confirmation):
        async with connect(mcp_url, token=token, mode=mode) as client:
            return await client.call_tool("check_in_attendee", {**arguments, "confirmation": confirmation})

    found, arguments, preview = run(ask())
    before = CheckIn.objects.filter(registration=ada).exists()
    done = run(confirm(arguments, preview.structured_content["confirmation"]))
    assert found.is_error is False
    [attendee] = found.structured_content["attendees"]
    assert (attendee["name"], attendee["email"], attendee["checkedIn"]) == (
        "Ada Lovelace",
        "a***@example.org",
        False,
    )
    assert (found.structured_content["confirmed"], found.structured_content["checkedIn"]) == (1, 0)
    assert preview.is_error is True and preview.structured_content["code"] == "CONFIRMATION_REQUIRED"
    assert (
        preview.structured_content["preview"]
        == "Check in Ada Lovelace (a***@example.org) at “Door over MCP”?"
    )
    assert before is False, "nothing happens before the person's yes"
    assert done.is_error is False
    assert done.structured_content["admitted"] is True and done.structured_content["checkedInBy"] == "Mei"
    assert CheckIn.objects.get(registration=ada).staff == staff
    for answer in (found, preview, done):
        assert ada.ticket_code not in json.dumps(answer.structured_content)
    rows = Activity.objects.filter(mode="mcp").order_by("id").values_list("action", "outcome", "user")
    assert list(rows) == [("find_attendee", "OK", staff.pk), ("check_in_attendee", "OK", staff.pk)]


def test_a_ticket_code_is_no_input_of_the_tool(mcp_url, door, token_for):
    event, staff, ada = door
    token = token_for(staff, scopes=DOOR)
    arguments = {"event_id": event.public_id, "ticket": ada.ticket_code}
    status, refused = run(raw_call(mcp_url, token, "check_in_attendee", arguments))
    assert status == 200 and refused["code"] == "INVALID_INPUT"
    assert not CheckIn.objects.exists()


def test_refused_without_the_scope_or_when_not_the_events_staff(mcp_url, door, token_for):
    event, staff, _ = door
    arguments = {"event_id": event.public_id, "query": ""}
    status, narrow = run(
        raw_call(mcp_url, token_for(staff, scopes=["events:read"]), "find_attendee", arguments)
    )
    assert status == 403 and (narrow["reason"], narrow["scope"]) == ("INSUFFICIENT_SCOPE", "checkin:write")
    stranger = UserFactory(username="not-door")
    status, refused = run(raw_call(mcp_url, token_for(stranger, scopes=DOOR), "find_attendee", arguments))
    assert refused["reason"] == "NOT_EVENT_STAFF" and "attendees" not in refused
    status, anonymous = run(raw_call(mcp_url, None, "find_attendee", arguments))
    assert status == 401 and anonymous["scope"] == "checkin:write"
