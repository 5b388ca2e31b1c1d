"""Paid registrations through the API: register_event answers pending_payment with the payment
(reference, amount, deadline, instructions, the person's own page), the person reports their
transfer (their session only), the event's managers confirm and refund; the list shows each
registration's payment."""

from __future__ import annotations

import pytest
from django.utils import timezone

from accounts.tokens import create_access_token
from events.choices import PaymentStatus, RegistrationStatus, StaffRole
from events.models import EventStaff, Registration
from tests.api.conftest import ApiClient, assert_envelope
from tests.factories import UserFactory, paid_event

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/api/events/evt-paid/registration"


@pytest.fixture(autouse=True)
def event(db):
    return paid_event(public_id="evt-paid", capacity=5, prices={"early": 600, "regular": 1200})


@pytest.fixture
def manager_api(event) -> ApiClient:
    manager = UserFactory(username="manager")
    EventStaff.objects.create(event=event, user=manager, role=StaffRole.MANAGER)
    client = ApiClient()
    client.force_login(manager)
    return client


def register(client: ApiClient, ticket_type: str = "early") -> dict:
    response = client.write("POST", URL, {"ticket_type": ticket_type})
    assert response.status_code == 201, response.content
    return response.json()


def test_registering_for_a_paid_type_answers_pending_payment_with_the_instructions(signed_in_api):
    body = register(signed_in_api)
    registration = body["registration"]
    assert (registration["status"], registration["ticketType"]) == ("pending_payment", "early")
    assert body["pendingPayment"] is True and "NOT registered" in body["nextAction"]
    payment = registration["payment"]
    assert (payment["amount"], payment["currency"], payment["status"]) == (600, "TWD", "awaiting")
    assert payment["reference"].startswith("PAID-")  # the event's code, from its id
    assert payment["methods"] == ["bank_transfer"]
    assert {"bank", "branch", "accountName", "accountNumber"} <= set(payment["instructions"])
    assert payment["url"].endswith("/events/evt-paid/payment/") and payment["dueAt"]
    # nextAction names the values themselves, so that relaying it word for word tells the person enough
    for value in ("600 TWD", payment["reference"], payment["dueAt"][:16], payment["url"]):
        assert value in body["nextAction"]
    assert "payment.amount" not in body["nextAction"]


def test_several_types_need_one_named(signed_in_api):
    body = assert_envelope(signed_in_api.write("POST", URL), 400, "INVALID_INPUT", "TICKET_TYPE_REQUIRED")
    assert body["ticketTypes"] == ["early", "regular"] and "ticket_type" in body["fields"]
    assert not Registration.objects.exists()


def test_the_list_of_registrations_shows_each_payment(signed_in_api):
    register(signed_in_api)
    body = signed_in_api.get("/api/me/registrations").json()
    [registration] = body["registrations"]
    assert registration["payment"]["status"] == "awaiting" and registration["payment"]["amount"] == 600


def test_the_person_reports_their_transfer_with_their_session_only(signed_in_api, user):
    register(signed_in_api)
    report = f"{URL}/payment-report"
    today = timezone.localdate().isoformat()
    response = signed_in_api.write("POST", report, {"accountLast5": "12345", "paidOn": today})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["registration"]["payment"]["status"] == "checking"
    assert "12345" not in response.content.decode()  # never answered back
    bad = signed_in_api.write("POST", report, {"accountLast5": "12a45", "paidOn": today})
    assert_envelope(bad, 400, "INVALID_INPUT", "VALIDATION_ERROR")
    _, raw = create_access_token(user=user, name="t", scopes=["registrations:write"], days=1)
    token = ApiClient().write(
        "POST", report, {"accountLast5": "12345", "paidOn": today}, Authorization=f"Bearer {raw}"
    )
    assert_envelope(token, 403, "PERMISSION_DENIED", "INSUFFICIENT_SCOPE")


def test_a_manager_confirms_and_the_payer_may_not(signed_in_api, manager_api):
    register(signed_in_api)
    attendee = Registration.objects.get()
    path = f"/api/events/evt-paid/payments/{attendee.pk}/confirm"
    assert_envelope(signed_in_api.write("POST", path), 403, "PERMISSION_DENIED", "NOT_ORGANISER")
    response = manager_api.write("POST", path)
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["status"], body["payment"]["status"], body["changed"]) == ("confirmed", "paid", True)
    again = manager_api.write("POST", path).json()
    assert again["changed"] is False
    assert_envelope(
        manager_api.write("POST", "/api/events/evt-paid/payments/999999/confirm"), 404, "NOT_FOUND"
    )


def test_a_manager_records_a_refund_once_the_seat_is_given_back(signed_in_api, manager_api):
    register(signed_in_api)
    attendee = Registration.objects.get()
    manager_api.write("POST", f"/api/events/evt-paid/payments/{attendee.pk}/confirm")
    refund = f"/api/events/evt-paid/payments/{attendee.pk}/refund"
    assert_envelope(manager_api.write("POST", refund), 409, "CONFLICT", "PAYMENT_NOT_REFUNDABLE")
    signed_in_api.write("DELETE", URL)
    response = manager_api.write("POST", refund, {"amount": 300})
    assert response.status_code == 200, response.content
    assert response.json()["payment"]["refundedAmount"] == 300
    attendee.refresh_from_db()
    assert (attendee.status, attendee.payment_status) == (
        RegistrationStatus.CANCELLED,
        PaymentStatus.REFUNDED,
    )
    assert_envelope(
        manager_api.write("POST", refund, {"amount": 1, "note": "x"}),
        400,
        "INVALID_INPUT",
        "UNKNOWN_PARAMETER",
    )


def test_paying_at_the_door_registers_at_once_and_names_the_amount(signed_in_api, event):
    event.at_door = True
    event.save(update_fields=["at_door"])
    response = signed_in_api.write("POST", URL, {"ticket_type": "regular", "payment_method": "at_door"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["registration"]["status"], body["registration"]["payment"]["status"]) == (
        "confirmed",
        "at_door",
    )
    assert "1,200 TWD at the door" in body["nextAction"]
