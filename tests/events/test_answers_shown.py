"""Where a registration's answers show up: the confirmation e-mail, the door (its `show_at_door`
answers, on the page and in `find_attendee`), the person's export; and where they go: with the
account, and after RETENTION_ANSWERS_DAYS from the event's end."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone, translation

from accounts import privacy
from core.visitors import Visitor
from events import actions
from events.choices import StaffRole
from events.models import EventStaff, Registration
from tests.factories import EventFactory, QuestionFactory, UserFactory, choice_question
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def registered():
    event = EventFactory(public_id="evt-answers-shown")
    choice_question(event, "diet", ["none", "vegan"], label_en="Dietary need", show_at_door=True)
    QuestionFactory(event=event, identifier="company", label_en="Company")
    person = UserFactory(username="amy", email="amy@example.com")
    answers = {"diet": "vegan", "company": "ACME"}
    with translation.override("en"):  # the e-mail is in the language the person registered in
        visitor = Visitor(user=person)
        actions.call(
            "register_event", visitor=visitor, channel="ui", event_id=event.public_id, answers=answers
        )
    return event, person


def test_the_confirmation_email_lists_the_answers(registered):
    run_tasks()
    body = mail.outbox[-1].body
    assert "Dietary need: Vegan" in body and "Company: ACME" in body


def test_the_door_sees_only_the_door_answers(registered, client):
    event, _ = registered
    staff = UserFactory()
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    with translation.override("en"):
        found = actions.call(
            "find_attendee", visitor=Visitor(user=staff), channel="ui", event_id=event.public_id
        )
    [attendee] = found.attendees
    assert [(a.identifier, a.label, a.value) for a in attendee.door_answers] == [
        ("diet", "Dietary need", "Vegan")
    ]
    client.force_login(staff)
    page = client.post(
        f"/events/{event.public_id}/check-in/find/", {"query": "amy"}, headers={"Accept-Language": "en"}
    ).content.decode()
    assert "Dietary need" in page and "Vegan" in page and "ACME" not in page


def test_the_export_carries_the_answers_and_the_deletion_takes_them(registered):
    event, person = registered
    [exported] = privacy.export_personal_data(user=person)["registrations"]
    assert exported["answers"]["company"]["value"] == "ACME"
    privacy.delete_account(user=person, language="en")
    assert not Registration.objects.filter(event=event).exists()


def test_answers_are_emptied_a_year_after_the_event_ends(settings, registered):
    event, _ = registered
    settings.RETENTION_ANSWERS_DAYS = 365
    with time_machine.travel(event.ends_at + timedelta(days=364), tick=False):
        assert privacy.clear_expired_personal_data().answers == 0
    with time_machine.travel(event.ends_at + timedelta(days=366), tick=False):
        assert privacy.clear_expired_personal_data().answers == 1
    registration = Registration.objects.get()
    assert registration.answers == {} and registration.is_active
    assert timezone.now()  # the registration itself stays


def test_the_privacy_page_says_how_long_answers_are_kept(client, settings):
    settings.RETENTION_ANSWERS_DAYS = 365
    page = client.get("/privacy/", headers={"Accept-Language": "en"}).content.decode()
    assert "deleted 365 days after the event ends" in page
