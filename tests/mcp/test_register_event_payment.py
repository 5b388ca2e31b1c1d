"""A paid registration over `/mcp` with the SDK's own client: the answer is `pending_payment` with
the payment's instructions and the person's own payment page; a client that declared URL-mode
elicitation is asked to open it (2026-07-28: an input-required result whose requestState is sealed;
2025-11-25: error -32042), any other client gets the address in the result. A manager's agent
confirms a payment with `confirm_payment` (the manager confirms each call)."""

from __future__ import annotations

import mcp.types as types
import pytest
from mcp import MCPError

from events.choices import PaymentStatus, RegistrationStatus, StaffRole
from events.models import EventStaff, Registration
from tests.factories import UserFactory, paid_event

from .conftest import connect, run

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workshop():
    return paid_event(
        public_id="evt-mcp-paid", title="Paid workshop", capacity=5, prices={"early": 600, "regular": 1200}
    )


def test_get_event_details_lists_the_types_with_prices_and_what_is_on_sale(mcp_url, workshop):
    async def read():
        async with connect(mcp_url, mode="2026-07-28") as client:
            return await client.call_tool("get_event_details", {"event_id": workshop.public_id})

    body = run(read()).structured_content
    assert [(t["identifier"], t["price"], t["onSale"]) for t in body["ticketTypes"]] == [
        ("early", 600, True),
        ("regular", 1200, True),
    ]
    assert body["paymentMethods"] == ["bank_transfer"]


def test_a_client_with_url_elicitation_is_asked_to_open_the_payment_page(mcp_url, user, token_for, workshop):
    token = token_for(user)
    asked: list = []

    async def person(context, params):
        asked.append(params)
        if getattr(params, "mode", "form") == "url":
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=person) as client:
            return await client.call_tool(
                "register_event", {"event_id": workshop.public_id, "ticket_type": "early"}
            )

    result = run(call())
    assert result.is_error is False, result.structured_content
    body = result.structured_content
    assert body["registration"]["status"] == "pending_payment" and body["pendingPayment"] is True
    payment = body["registration"]["payment"]
    assert (payment["amount"], payment["currency"]) == (600, "TWD")
    assert payment["url"].endswith("/events/evt-mcp-paid/payment/")
    assert payment["instructions"]["kind"] == "bank_transfer"
    assert "NOT registered" in body["nextAction"]
    _confirm, page = asked
    assert page.mode == "url" and page.url == payment["url"]
    assert "Paid workshop" in page.message and "600" in page.message
    assert "alice" not in page.url and payment["reference"] not in page.url  # nothing personal in it
    registration = Registration.objects.get(user=user)
    assert (registration.status, registration.payment_status) == (
        RegistrationStatus.PENDING_PAYMENT,
        PaymentStatus.AWAITING,
    )


@pytest.mark.parametrize("declared", [True, False])
def test_a_legacy_client_with_url_elicitation_gets_error_32042_and_its_retry_the_result(
    mcp_url, user, token_for, workshop, declared
):
    token = token_for(user)

    async def person(context, params):  # declares elicitation (form and URL) in its handshake
        return types.ElicitResult(action="accept")

    async def call():
        async with connect(
            mcp_url, token=token, mode="legacy", elicitation=person if declared else None
        ) as client:
            arguments = {"event_id": workshop.public_id, "ticket_type": "early"}
            preview = await client.call_tool("register_event", arguments)
            confirmation = preview.structured_content["confirmation"]
            try:
                first = await client.call_tool("register_event", {**arguments, "confirmation": confirmation})
            except MCPError as error:
                first = error
            retry = await client.call_tool("register_event", {**arguments, "confirmation": confirmation})
            return first, retry

    first, retry = run(call())
    body = retry.structured_content
    assert retry.is_error is False, body
    assert body["registration"]["status"] == "pending_payment"
    if declared:  # the client declared URL-mode elicitation: it is asked to open the page
        assert isinstance(first, MCPError), first
        assert first.error.code == -32042
        [elicitation] = first.error.data["elicitations"]
        assert elicitation["url"] == body["registration"]["payment"]["url"] and elicitation["elicitationId"]
    else:  # a client that declared none gets the page's address in the result
        assert first.structured_content["registration"]["payment"]["url"].endswith("/payment/")
    assert Registration.objects.filter(user=user).count() == 1


def test_a_client_without_elicitation_gets_the_address_in_the_result(mcp_url, user, token_for, workshop):
    token = token_for(user)

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28") as client:
            arguments = {"event_id": workshop.public_id, "ticket_type": "regular"}
            preview = await client.call_tool("register_event", arguments)
            assert "TWD 1,200" in preview.structured_content["preview"]
            confirmation = preview.structured_content["confirmation"]
            return await client.call_tool("register_event", {**arguments, "confirmation": confirmation})

    body = run(call()).structured_content
    assert body["registration"]["payment"]["amount"] == 1200
    assert body["registration"]["payment"]["url"].endswith("/events/evt-mcp-paid/payment/")


def test_several_types_without_one_named_ask_the_agent_to_ask_the_person(mcp_url, user, token_for, workshop):
    token = token_for(user)

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28") as client:
            return await client.call_tool("register_event", {"event_id": workshop.public_id})

    result = run(call())
    body = result.structured_content
    assert result.is_error and body["reason"] == "TICKET_TYPE_REQUIRED"
    assert body["ticketTypes"] == ["early", "regular"]
    assert not Registration.objects.exists()


def test_a_managers_agent_confirms_a_payment_and_the_manager_confirms_the_call(mcp_url, token_for, workshop):
    payer = UserFactory(username="payer")
    from core.visitors import Mode, Visitor
    from events import actions

    actions.call(
        "register_event",
        visitor=Visitor(user=payer),
        channel=Mode.API,
        event_id=workshop.public_id,
        ticket_type="early",
    )
    registration = Registration.objects.get(user=payer)
    manager = UserFactory(username="manager")
    EventStaff.objects.create(event=workshop, user=manager, role=StaffRole.MANAGER)
    token = token_for(manager, scopes=["payments:write"])
    asked: list = []

    async def yes(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=yes) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert "confirm_payment" in tools
            return await client.call_tool(
                "confirm_payment", {"event_id": workshop.public_id, "attendee_id": registration.pk}
            )

    result = run(call())
    assert result.is_error is False, result.structured_content
    assert "paid TWD 600" in asked[0].message
    body = result.structured_content
    assert body["status"] == "confirmed" and body["payment"]["status"] == "paid"
    assert "reportedAccountLast5" not in str(body)
    registration.refresh_from_db()
    assert registration.payment_status == PaymentStatus.PAID


def test_the_payer_cannot_confirm_their_own_payment_over_mcp(mcp_url, user, token_for, workshop):
    from core.visitors import Mode, Visitor
    from events import actions

    actions.call(
        "register_event",
        visitor=Visitor(user=user),
        channel=Mode.API,
        event_id=workshop.public_id,
        ticket_type="early",
    )
    registration = Registration.objects.get(user=user)
    token = token_for(user, scopes=["payments:write"])

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28") as client:
            return await client.call_tool(
                "confirm_payment", {"event_id": workshop.public_id, "attendee_id": registration.pk}
            )

    body = run(call()).structured_content
    assert body["reason"] in ("NOT_EVENT_STAFF", "NOT_ORGANISER")
    registration.refresh_from_db()
    assert registration.payment_status == PaymentStatus.AWAITING
