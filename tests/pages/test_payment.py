"""Paid registrations on the pages: the register form offers the ticket types on sale (and paying at
the door where offered), the event page and My events say what is due and link to the person's own
payment page, which needs their sign-in, names nobody in its address and answers 404 for anyone
else; its form reports the transfer. The event page's WebMCP `register_event` takes that event's
`ticket_type` enum. The admin's upload page applies a statement and shows each row's state."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from events.choices import PaymentStatus, RegistrationStatus
from events.models import BankStatementRow, Registration
from tests.factories import UserFactory, paid_event

from .conftest import EN, manifest_tools

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def event():
    return paid_event(
        public_id="evt-paid-page",
        title="Paid workshop",
        capacity=5,
        at_door=True,
        prices={"early": 600, "regular": 1200},
    )


def detail(client: Client, event) -> str:
    return client.get(reverse("event-detail", kwargs={"event_id": event.public_id})).content.decode()


def test_the_form_offers_the_types_on_sale_and_the_door_and_the_tool_takes_the_types(
    signed_in_en_client, event
):
    html = detail(signed_in_en_client, event)
    assert 'name="ticket_type" value="early"' in html and 'name="ticket_type" value="regular"' in html
    assert "TWD 600" in html and "TWD 1,200" in html
    assert 'name="payment_method" value="at_door"' in html
    assert "from TWD 600" in html  # the price summary: the types differ
    schema = manifest_tools(html)["register_event"]["inputSchema"]
    assert schema["properties"]["ticket_type"] == {"type": "string", "enum": ["early", "regular"]}
    assert schema["properties"]["payment_method"]["enum"] == ["bank_transfer", "at_door"]
    assert "ticket_type" in schema["required"]
    assert "Early" not in str(schema)  # identifiers only: names are organisers' text


def test_registering_on_the_page_holds_the_seat_and_links_to_the_payment_page(
    signed_in_en_client, user, event
):
    url = reverse("register-event", kwargs={"event_id": event.public_id})
    response = signed_in_en_client.post(url, {"ticket_type": "early"}, follow=True)
    html = response.content.decode()
    registration = Registration.objects.get(user=user)
    assert registration.status == RegistrationStatus.PENDING_PAYMENT
    assert "payment needed" in html and 'id="pay-now"' in html
    me = signed_in_en_client.get(reverse("me")).content.decode()
    assert "TWD 600 to pay by" in me and f"/events/{event.public_id}/payment/" in me


def test_a_missing_type_is_told_on_the_page(signed_in_en_client, user, event):
    url = reverse("register-event", kwargs={"event_id": event.public_id})
    html = signed_in_en_client.post(url, {}, follow=True).content.decode()
    assert "Please choose a ticket type." in html
    assert not Registration.objects.exists()


def test_paying_at_the_door_registers_at_once(signed_in_en_client, user, event):
    url = reverse("register-event", kwargs={"event_id": event.public_id})
    html = signed_in_en_client.post(url, {"ticket_type": "regular", "payment_method": "at_door"}, follow=True)
    assert "TWD 1,200 due at the door" in html.content.decode()
    assert Registration.objects.get(user=user).payment_status == PaymentStatus.AT_DOOR


def test_the_payment_page_is_the_persons_own(signed_in_en_client, user, event):
    page = reverse("payment", kwargs={"event_id": event.public_id})
    anonymous = Client(headers=EN).get(page)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert signed_in_en_client.get(page).status_code == 404  # nothing to pay yet
    signed_in_en_client.post(
        reverse("register-event", kwargs={"event_id": event.public_id}), {"ticket_type": "early"}
    )
    registration = Registration.objects.get(user=user)
    html = signed_in_en_client.get(page).content.decode()
    assert registration.payment_reference_text in html and settings.PAYMENT_ACCOUNT_NUMBER in html
    assert "TWD 600" in html and 'id="payment-report"' in html
    stranger = Client(headers=EN)
    stranger.force_login(UserFactory(username="stranger"))
    other = stranger.get(page)
    assert other.status_code == 404 and registration.payment_reference not in other.content.decode()
    assert re.fullmatch(r"/events/evt-paid-page/payment/", page)


def test_the_report_form_marks_the_transfer_as_being_checked(signed_in_en_client, user, event):
    signed_in_en_client.post(
        reverse("register-event", kwargs={"event_id": event.public_id}), {"ticket_type": "early"}
    )
    page = reverse("payment", kwargs={"event_id": event.public_id})
    report = reverse("report-payment", kwargs={"event_id": event.public_id})
    bad = signed_in_en_client.post(
        report, {"account_last5": "12", "paid_on": "2026-01-01", "next": page}, follow=True
    )
    assert bad.redirect_chain[-1][0] == page
    assert Registration.objects.get(user=user).payment_status == PaymentStatus.AWAITING
    today = timezone.localdate().isoformat()
    done = signed_in_en_client.post(
        report, {"account_last5": "12345", "paid_on": today, "next": page}, follow=True
    )
    html = done.content.decode()
    assert "your transfer is being checked" in html.lower()
    assert Registration.objects.get(user=user).payment_status == PaymentStatus.CHECKING


def test_the_admins_upload_page_applies_the_statement_and_shows_each_rows_state(event):
    from django.core.management import call_command

    call_command("seed_demo", stdout=__import__("io").StringIO())
    admin = Client(headers=EN)
    admin.force_login(UserFactory(username="organiser", is_staff=True, is_superuser=True))
    url = reverse("admin:events_bankstatementrow_import")
    assert admin.get(url).status_code == 200
    sample = Path(settings.BASE_DIR) / "events" / "fixtures" / "sample-bank-statement.csv"
    with sample.open("rb") as statement:
        html = admin.post(url, {"statement": statement}).content.decode()
    states = re.findall(r'data-state="([a-z_]+)"', html)
    assert states == ["matched", "partial", "no_match", "invalid", "already_paid"]
    assert "12345" not in html and "***45" in html  # the digits masked
    assert BankStatementRow.objects.count() == 5
    with sample.open("rb") as statement:
        again = admin.post(url, {"statement": statement}).content.decode()
    assert re.findall(r'data-state="([a-z_]+)"', again) == ["already_imported"] * 5
    changelist = admin.get(reverse("admin:events_bankstatementrow_changelist")).content.decode()
    assert "Import a bank statement" in changelist


def test_a_manager_imports_the_statement_of_their_event_only(event):
    from events.choices import StaffRole
    from events.models import EventStaff

    manager = UserFactory(username="manager", is_staff=True)
    EventStaff.objects.create(event=event, user=manager, role=StaffRole.MANAGER)
    from events.services.staff import sync_manager_access

    sync_manager_access(manager)
    client = Client(headers=EN)
    client.force_login(manager)
    url = reverse("admin:events_bankstatementrow_import")
    page = client.get(url)
    assert page.status_code == 200
    choices = page.context["form"].fields["event"].queryset
    assert list(choices) == [event]
    unpaid = client.get(reverse("admin:events_registration_changelist") + "?payment=unpaid")
    assert unpaid.status_code == 200
