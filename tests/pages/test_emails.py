"""The registration confirmation: one e-mail per new registration, with the event's .ics attached."""

from __future__ import annotations

import pytest
from django.core import mail
from icalendar import Calendar

from events.emails import send_registration_confirmation
from tests.factories import RegistrationFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_registering_from_the_page_sends_one_email_with_the_ics(
    signed_in_en_client, user, event, django_capture_on_commit_callbacks, settings
):
    settings.SITE_URL = "http://testserver"
    with django_capture_on_commit_callbacks(execute=True):
        signed_in_en_client.post(f"/events/{event.public_id}/register/")
    with django_capture_on_commit_callbacks(execute=True):
        signed_in_en_client.post(f"/events/{event.public_id}/register/")  # already registered: no new mail

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [user.email]
    assert event.title in message.subject
    assert f"http://testserver/events/{event.public_id}/" in message.body
    (attachment,) = message.attachments
    assert attachment.filename == f"{event.public_id}.ics"
    assert attachment.mimetype == "text/calendar"
    (entry,) = Calendar.from_ical(attachment.content).walk("VEVENT")
    assert str(entry["UID"]).startswith(event.public_id)


def test_no_email_for_an_account_without_address(event):
    registration = RegistrationFactory(user=UserFactory(email=""), event=event)
    assert send_registration_confirmation(registration) is False
    assert mail.outbox == []


def test_registering_through_the_api_sends_the_same_email_once(
    signed_in_en_client, user, event, django_capture_on_commit_callbacks
):
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            signed_in_en_client.post(
                f"/api/events/{event.public_id}/registration", content_type="application/json"
            )
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == [user.email]
