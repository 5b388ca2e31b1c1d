"""The registration confirmation: one e-mail per new registration, with the event's .ics attached,
queued in the outbox and sent by the task worker."""

from __future__ import annotations

import pytest
from django.core import mail
from icalendar import Calendar

from core.visitors import Mode, Visitor
from events import actions
from events.models import Notification
from tests.factories import UserFactory
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_registering_from_the_page_sends_one_email_with_the_ics(signed_in_en_client, user, event, settings):
    settings.SITE_URL = "http://testserver"
    signed_in_en_client.post(f"/events/{event.public_id}/register/")
    signed_in_en_client.post(f"/events/{event.public_id}/register/")  # already registered: no new mail
    run_tasks()

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [user.email]
    assert event.title in message.subject
    assert f"http://testserver/events/{event.public_id}/" in message.body
    attachment, ticket = message.attachments
    assert attachment.filename == f"{event.public_id}.ics"
    assert attachment.mimetype == "text/calendar"
    assert ticket.get_content_type() == "image/png" and ticket["Content-ID"]  # the ticket, inline
    (entry,) = Calendar.from_ical(attachment.content).walk("VEVENT")
    assert str(entry["UID"]).startswith(event.public_id)


def test_no_email_for_an_account_without_address(event):
    person = Visitor(user=UserFactory(email=""))
    actions.call("register_event", visitor=person, channel=Mode.API, event_id=event.public_id)
    run_tasks()
    assert (Notification.objects.count(), mail.outbox) == (0, [])


def test_registering_through_the_api_sends_the_same_email_once(signed_in_en_client, user, event):
    for _ in range(2):
        signed_in_en_client.post(
            f"/api/events/{event.public_id}/registration", content_type="application/json"
        )
    run_tasks()
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == [user.email]
