"""`/mcp` with the SDK's client, in both eras: the tools list, reads, writes with a token, refusals."""

from __future__ import annotations

import time

import pytest

from events.choices import RegistrationStatus
from events.models import Activity, Registration, SavedEvent
from tests.factories import EventFactory, paid_event

from .conftest import MODES, call_tool, connect, raw_call, run

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("mode", MODES)
def test_tools_list_is_the_registry_in_order_with_mcp_annotations(mcp_url, mode, mcp_tool_names):
    async def listed():
        async with connect(mcp_url, mode=mode) as client:
            return await client.list_tools()

    tools = {tool.name: tool for tool in run(listed()).tools}
    assert list(tools) == sorted(mcp_tool_names)  # the registry's order: by name
    search = tools["search_events"]
    assert search.annotations.read_only_hint is True and search.annotations.open_world_hint is False
    assert set(search.input_schema["properties"]) == {"query", "location", "price", "level"}
    details = tools["get_event_details"]
    assert details.input_schema["required"] == ["event_id"]  # route-bound in the browser, explicit here
    register = tools["register_event"]
    assert register.annotations.read_only_hint is False and register.annotations.destructive_hint is False
    assert "confirmation" in register.input_schema["properties"]
    assert tools["cancel_registration"].annotations.destructive_hint is True
    assert all(tool.output_schema["required"] == ["ok"] for tool in tools.values())


@pytest.mark.parametrize("mode", MODES)
def test_search_and_details_anonymously(mcp_url, mode):
    EventFactory(public_id="evt-mcp-one", title="MCP 入門", location="taipei")

    async def calls():
        async with connect(mcp_url, mode=mode) as client:
            found = await client.call_tool("search_events", {"query": "MCP"})
            details = await client.call_tool("get_event_details", {"event_id": "evt-mcp-one"})
            return found, details

    found, details = run(calls())
    assert found.is_error is False
    assert [event["id"] for event in found.structured_content["events"]] == ["evt-mcp-one"]
    assert details.structured_content["event"]["title"] == "MCP 入門"
    assert details.structured_content["stateVersion"] == 0
    rows = list(Activity.objects.order_by("id").values_list("action", "mode", "outcome"))
    assert rows == [("search_events", "mcp", "OK"), ("get_event_details", "mcp", "OK")]


@pytest.mark.parametrize("mode", MODES)
def test_bad_input_and_unknown_ids_are_is_error_envelopes(mcp_url, mode):
    async def calls():
        async with connect(mcp_url, mode=mode) as client:
            return (
                await client.call_tool("search_events", {"location": "mars"}),
                await client.call_tool("search_events", {"nonsense": 1}),
                await client.call_tool("get_event_details", {"event_id": "evt-none"}),
            )

    bad_enum, unknown_key, missing = run(calls())
    assert (bad_enum.is_error, bad_enum.structured_content["code"]) == (True, "INVALID_INPUT")
    assert unknown_key.structured_content["reason"] == "UNKNOWN_PARAMETER"
    assert (missing.structured_content["code"], missing.structured_content["reason"]) == (
        "NOT_FOUND",
        "EVENT_NOT_FOUND",
    )
    assert all("stateVersion" in answer.structured_content for answer in (bad_enum, unknown_key, missing))
    # Each refused call is one row, the two refused before the use case ran included.
    assert list(Activity.objects.order_by("id").values_list("action", "mode", "outcome")) == [
        ("search_events", "mcp", "VALIDATION_ERROR"),
        ("search_events", "mcp", "UNKNOWN_PARAMETER"),
        ("get_event_details", "mcp", "EVENT_NOT_FOUND"),
    ]


def test_anonymous_writes_need_a_token(mcp_url):
    EventFactory(public_id="evt-mcp-anon")

    # HTTP 401 is what starts a client's sign-in (tests/browser/test_mcp_sign_in.py signs in); the
    # body still says why, for a client that reads it.
    status, saved = run(raw_call(mcp_url, None, "save_event", {"event_id": "evt-mcp-anon"}))
    assert status == 401
    assert (saved["code"], saved["reason"], saved["scope"]) == (
        "AUTH_REQUIRED",
        "SIGN_IN_REQUIRED",
        "saved:write",
    )
    assert "access token" in saved["message"]
    assert not SavedEvent.objects.exists()
    row = Activity.objects.get()
    assert (row.action, row.mode, row.outcome, row.user, row.event.public_id) == (
        "save_event",
        "mcp",
        "SIGN_IN_REQUIRED",
        None,
        "evt-mcp-anon",
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_token_saves_and_a_missing_scope_is_refused(mcp_url, mode, user, token_for):
    EventFactory(public_id="evt-mcp-save")
    full = token_for(user)
    read_only = token_for(user, scopes=["events:read"])

    async def calls():
        async with connect(mcp_url, token=full, mode=mode) as client:
            saved = await client.call_tool("save_event", {"event_id": "evt-mcp-save"})
        refused = await raw_call(mcp_url, read_only, "register_event", {"event_id": "evt-mcp-save"})
        return saved, refused

    saved, (status, refused) = run(calls())
    assert status == 403  # a token without the scope: the client may ask the person for more
    assert (saved.is_error, saved.structured_content["saved"], saved.structured_content["stateVersion"]) == (
        False,
        True,
        1,
    )
    assert SavedEvent.objects.filter(user=user).count() == 1
    assert (refused["reason"], refused["scope"]) == (
        "INSUFFICIENT_SCOPE",
        "registrations:write",
    )
    assert not Registration.objects.exists()
    rows = Activity.objects.order_by("id").values_list("action", "outcome", "user")
    assert list(rows) == [("save_event", "OK", user.pk), ("register_event", "INSUFFICIENT_SCOPE", user.pk)]


def test_a_ticket_type_given_as_an_answer_is_pointed_at_ticket_type_before_any_confirmation(
    mcp_url, user, token_for
):
    """Over MCP every registration is previewed first (the confirmation), and the preview refuses what
    the use case would refuse, with the same words: answers to an event that asks no questions name
    its ticket types on sale (a small model's mistake, evals/README.md). Nothing is written."""
    paid_event(public_id="evt-mcp-types", prices={"student": 300, "regular": 600})
    token = token_for(user)

    async def calls():
        async with connect(mcp_url, token=token, mode=MODES[-1]) as client:
            return await client.call_tool(
                "register_event", {"event_id": "evt-mcp-types", "answers": {"student": "yes"}}
            )

    refused = run(calls())
    assert refused.is_error is True and refused.structured_content["reason"] == "ANSWERS_INVALID"
    assert refused.structured_content["nextAction"] == (
        "This event asks no questions: call again without answers. The ticket type the person chose "
        "goes in ticket_type, one of: student, regular."
    )
    assert not Registration.objects.exists()


@pytest.mark.parametrize("mode", MODES)
def test_register_without_elicitation_is_a_preview_then_a_confirmed_call(mcp_url, mode, user, token_for):
    EventFactory(public_id="evt-mcp-reg", title="Confirm me", capacity=3)
    token = token_for(user)

    async def calls():
        async with connect(mcp_url, token=token, mode=mode) as client:
            first = await client.call_tool("register_event", {"event_id": "evt-mcp-reg"})
            confirmation = first.structured_content["confirmation"]
            tampered = await client.call_tool(
                "register_event", {"event_id": "evt-mcp-other", "confirmation": confirmation}
            )
            done = await client.call_tool(
                "register_event", {"event_id": "evt-mcp-reg", "confirmation": confirmation}
            )
            cancel_preview = await client.call_tool("cancel_registration", {"event_id": "evt-mcp-reg"})
            cancelled = await client.call_tool(
                "cancel_registration",
                {
                    "event_id": "evt-mcp-reg",
                    "confirmation": cancel_preview.structured_content["confirmation"],
                },
            )
            replay = await client.call_tool(
                "register_event", {"event_id": "evt-mcp-reg", "confirmation": confirmation}
            )
            return first, tampered, done, cancelled, replay

    first, tampered, done, cancelled, replay = run(calls())
    assert first.is_error is True and first.structured_content["code"] == "CONFIRMATION_REQUIRED"
    assert "Confirm me" in first.structured_content["preview"]
    assert "年" not in first.structured_content["preview"]  # an English sentence, its date too
    assert tampered.structured_content["reason"] == "CONFIRMATION_INVALID"
    assert done.is_error is False and done.structured_content["registration"]["status"] == "confirmed"
    assert cancelled.structured_content["registration"]["status"] == "cancelled"
    # The confirmation was spent by the registration: replaying it writes nothing.
    assert replay.is_error is True and replay.structured_content["reason"] == "CONFIRMATION_INVALID"
    assert Registration.objects.get(user=user).status == RegistrationStatus.CANCELLED
    # The stale confirmations' previews are no rows of their own: each call's outcome is its refusal.
    registers = Activity.objects.filter(action="register_event").values_list("mode", "outcome")
    assert list(registers) == [("mcp", "OK")]


def test_register_with_elicitation_asks_the_person(mcp_url, user, token_for):
    import mcp.types as types

    EventFactory(public_id="evt-mcp-ask", title="Ask me", capacity=3)
    token = token_for(user)
    asked = []

    async def yes(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def no(context, params):
        return types.ElicitResult(action="decline")

    async def calls():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=no) as client:
            declined = await client.call_tool("register_event", {"event_id": "evt-mcp-ask"})
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=yes) as client:
            accepted = await client.call_tool("register_event", {"event_id": "evt-mcp-ask"})
        return declined, accepted

    declined, accepted = run(calls())
    assert (declined.is_error, declined.structured_content["code"]) == (True, "USER_CANCELLED")
    assert accepted.is_error is False and accepted.structured_content["registration"]["status"] == "confirmed"
    assert asked and "Ask me" in asked[0]
    assert Registration.objects.filter(user=user, status=RegistrationStatus.CONFIRMED).count() == 1


def test_an_invented_confirmation_asks_the_person_when_the_client_can(mcp_url, user, token_for):
    import mcp.types as types

    EventFactory(public_id="evt-mcp-made-up", title="Ask me first", capacity=3)
    token = token_for(user)
    asked = []

    async def no(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    async def calls():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=no) as client:
            return await client.call_tool(
                "register_event", {"event_id": "evt-mcp-made-up", "confirmation": "I am ready to register"}
            )

    declined = run(calls())
    # Not CONFIRMATION_INVALID: the person was asked, said no, and nothing was written.
    assert asked and "Ask me first" in asked[0]
    assert (declined.is_error, declined.structured_content["code"]) == (True, "USER_CANCELLED")
    assert not Registration.objects.exists()


def test_a_full_event_is_refused_before_asking(mcp_url, user, token_for):
    from tests.factories import RegistrationFactory

    event = EventFactory(public_id="evt-mcp-full", capacity=1)
    RegistrationFactory(event=event)
    token = token_for(user)

    async def calls():
        async with connect(mcp_url, token=token) as client:
            return await client.call_tool("register_event", {"event_id": "evt-mcp-full"})

    refused = run(calls())
    assert (refused.structured_content["code"], refused.structured_content["reason"]) == (
        "CONFLICT",
        "EVENT_FULL",
    )
    # Refused before asking the person: the preview's refusal is the call's one row.
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("register_event", "mcp", "EVENT_FULL")
    ]


@pytest.mark.parametrize("mode", MODES)
def test_the_waiting_list_over_mcp(mcp_url, mode, user, token_for):
    from tests.factories import RegistrationFactory

    event = EventFactory(public_id="evt-mcp-wait", capacity=1)
    RegistrationFactory(event=event)
    token = token_for(user)

    async def calls():
        async with connect(mcp_url, token=token, mode=mode) as client:
            joined = await client.call_tool("join_waitlist", {"event_id": "evt-mcp-wait"})
            again = await client.call_tool("join_waitlist", {"event_id": "evt-mcp-wait"})
            details = await client.call_tool("get_event_details", {"event_id": "evt-mcp-wait"})
            left = await client.call_tool("leave_waitlist", {"event_id": "evt-mcp-wait"})
            return joined, again, details, left

    joined, again, details, left = run(calls())
    assert (joined.structured_content["position"], joined.structured_content["alreadyWaiting"]) == (1, False)
    assert again.structured_content["alreadyWaiting"] is True
    assert details.structured_content["waitlist"]["position"] == 1
    assert (left.structured_content["wasWaiting"], left.structured_content["declinedOffer"]) == (True, False)
    modes = set(
        Activity.objects.filter(action__in=["join_waitlist", "leave_waitlist"]).values_list("mode", flat=True)
    )
    assert modes == {"mcp"}


def test_cancel_registration_without_a_registration_is_a_registration_not_found_error(
    mcp_url, user, token_for
):
    EventFactory(public_id="evt-mcp-none")
    refused = run(call_tool(mcp_url, token_for(user), "cancel_registration", {"event_id": "evt-mcp-none"}))
    assert refused.is_error is True
    envelope = refused.structured_content
    assert (envelope["code"], envelope["reason"]) == ("NOT_FOUND", "REGISTRATION_NOT_FOUND")
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("cancel_registration", "mcp", "REGISTRATION_NOT_FOUND")
    ]


def test_join_waitlist_with_free_seats_is_a_seats_available_error(mcp_url, user, token_for):
    EventFactory(public_id="evt-mcp-open", capacity=5)
    refused = run(call_tool(mcp_url, token_for(user), "join_waitlist", {"event_id": "evt-mcp-open"}))
    assert refused.is_error is True
    envelope = refused.structured_content
    assert (envelope["code"], envelope["reason"]) == ("CONFLICT", "SEATS_AVAILABLE")
    assert "register_event" in envelope["nextAction"]
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("join_waitlist", "mcp", "SEATS_AVAILABLE")
    ]


def test_leave_waitlist_without_a_token_is_a_sign_in_required_error(mcp_url):
    EventFactory(public_id="evt-mcp-leave")
    status, refused = run(raw_call(mcp_url, None, "leave_waitlist", {"event_id": "evt-mcp-leave"}))
    assert status == 401
    assert (refused["ok"], refused["code"], refused["reason"], refused["scope"]) == (
        False,
        "AUTH_REQUIRED",
        "SIGN_IN_REQUIRED",
        "registrations:write",
    )
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("leave_waitlist", "mcp", "SIGN_IN_REQUIRED")
    ]


def _accept():
    import mcp.types as types

    return {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}


def test_an_answer_without_the_servers_request_state_is_refused(mcp_url, user, token_for):
    """A made-up `inputResponses` yes, with no `requestState` the server sent, runs nothing."""
    EventFactory(public_id="evt-mcp-forged", capacity=3)
    token = token_for(user)

    async def calls():
        async with connect(mcp_url, token=token, mode="2026-07-28") as client:
            return await client.call_tool(
                "register_event", {"event_id": "evt-mcp-forged"}, input_responses=_accept()
            )

    refused = run(calls())
    assert refused.is_error is True
    assert (refused.structured_content["code"], refused.structured_content["reason"]) == (
        "INVALID_INPUT",
        "REQUEST_STATE_MISSING",
    )
    assert not Registration.objects.exists()


def test_a_request_state_is_spent_by_its_answer_and_bound_to_its_arguments(mcp_url, user, token_for):
    """Altered or for other arguments: refused. Answered once (here the seat went meanwhile, so the
    caller's state did not move): sending the same yes again when a seat is free does nothing."""
    from asgiref.sync import sync_to_async
    from mcp import MCPError

    from tests.factories import RegistrationFactory

    event = EventFactory(public_id="evt-mcp-once", capacity=1)
    EventFactory(public_id="evt-mcp-else", capacity=3)
    token = token_for(user)

    async def yes(context, params):
        return _accept()["confirm"]

    async def answer(client, event_id, state):
        try:
            return await client.call_tool(
                "register_event", {"event_id": event_id}, input_responses=_accept(), request_state=state
            )
        except MCPError as error:  # the SDK's own seal around ours refuses these first
            return error

    async def calls():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=yes) as client:
            asked = await client.session.call_tool(
                "register_event", {"event_id": "evt-mcp-once"}, allow_input_required=True
            )
            state = asked.request_state
            altered = await answer(
                client, "evt-mcp-once", state[:-3] + ("AAA" if state[-3:] != "AAA" else "BBB")
            )
            other = await answer(client, "evt-mcp-else", state)
            taken = await sync_to_async(RegistrationFactory)(event=event)  # the last seat goes meanwhile
            full = await answer(client, "evt-mcp-once", state)
            await sync_to_async(taken.delete)()
            again = await answer(client, "evt-mcp-once", state)
            return asked, altered, other, full, again

    asked, altered, other, full, again = run(calls())
    assert asked.input_requests and asked.request_state
    assert isinstance(altered, MCPError) and isinstance(other, MCPError)
    assert full.structured_content["reason"] == "EVENT_FULL"
    assert again.is_error is True and again.structured_content["reason"] == "REQUEST_STATE_REUSED"
    assert not Registration.objects.filter(user=user).exists()


def test_request_states_made_up_altered_expired_or_for_another_caller_are_refused():
    import time_machine
    from django_webmcp.mcp import seal_request_state, spend_request_state

    call = {"principal": "user:1:v3", "tool": "register_event", "arguments": {"event_id": "evt-x"}}
    reason = lambda state, **changed: (spend_request_state(state, **{**call, **changed}) or {}).get("reason")  # noqa: E731
    assert reason(None) == "REQUEST_STATE_MISSING"
    assert reason('{"tool": "register_event"}') == "REQUEST_STATE_INVALID"  # the old plain JSON
    state = seal_request_state(**call)
    assert reason(state[:-2] + ("AA" if not state.endswith("AA") else "BB")) == "REQUEST_STATE_INVALID"
    assert reason(state, principal="user:2:v3") == "REQUEST_STATE_INVALID"
    assert reason(state, tool="cancel_registration") == "REQUEST_STATE_INVALID"
    assert reason(state, arguments={"event_id": "evt-y"}) == "REQUEST_STATE_INVALID"
    with time_machine.travel(time.time() + 301):
        assert reason(state) == "REQUEST_STATE_EXPIRED"
    assert reason(state) is None  # in time and unspent: the answer counts, once
    assert reason(state) == "REQUEST_STATE_REUSED"
