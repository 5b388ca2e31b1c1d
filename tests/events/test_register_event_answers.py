"""register_event with answers, update_registration_answers, and the approval actions, at the action:
the answers are checked by the one validator and stored with their labels; a refusal writes nothing;
an event that requires approval holds the seat until its managers decide, each decision e-mailed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone, translation

from core.visitors import Visitor
from events import actions
from events.choices import RegistrationStatus, WaitlistStatus
from events.errors import AnswersClosed, AnswersInvalid, NotPendingApproval
from events.models import Activity, Event, Notification, Registration, WaitlistEntry
from tests.factories import (
    EventFactory,
    QuestionFactory,
    RegistrationFactory,
    UserFactory,
    choice_question,
    paid_event,
)
from tests.tasks import run_tasks

from .conftest import version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def workshop() -> Event:
    event = EventFactory(capacity=1)
    diet = choice_question(event, "diet", ["none", "vegetarian", "other"], required=True, label_en="Diet")
    other = QuestionFactory(event=event, identifier="diet_other", required=True, label_en="Which diet?")
    other.show_if, other.show_if_values = diet, ["other"]
    other.save()
    QuestionFactory(event=event, identifier="photos", kind="consent", label_en="Photos are fine")
    QuestionFactory(event=event, identifier="table", staff_only=True)
    event.refresh_from_db()
    return event


def register(visitor, event, **data):
    return actions.call("register_event", visitor=visitor, channel="api", event_id=event.public_id, **data)


def test_the_answers_are_stored_with_the_labels_they_answered(person, workshop):
    answers = {"diet": "other", "diet_other": "no nuts", "photos": True}
    result = register(person, workshop, answers=answers)
    stored = Registration.objects.get().answers
    assert result.registration.status == RegistrationStatus.CONFIRMED
    assert stored["diet"] == {
        "value": "other",
        "label": {"en": "Diet", "zh-hant": stored["diet"]["label"]["zh-hant"]},
    }
    assert stored["diet_other"]["value"] == "no nuts"
    assert stored["photos"]["value"] is True


def test_missing_answers_are_refused_and_nothing_is_written(person, workshop):
    with pytest.raises(AnswersInvalid) as caught:
        register(person, workshop, answers={"diet": "other"})
    assert set(caught.value.extra["fields"]) == {"answers.diet_other", "answers.photos"}
    assert Registration.objects.count() == 0
    assert Event.objects.get(pk=workshop.pk).seats_taken == 0
    assert version(person) == 0
    assert Activity.objects.get().outcome == "ANSWERS_INVALID"


def test_an_answer_to_a_question_not_shown_is_dropped(person, workshop):
    register(person, workshop, answers={"diet": "none", "diet_other": "ignored", "photos": True})
    assert "diet_other" not in Registration.objects.get().answers


def test_an_event_without_questions_registers_as_before_and_refuses_any_answer(person):
    event = EventFactory()
    with pytest.raises(AnswersInvalid) as caught:
        register(person, event, answers={"diet": "none"})
    assert caught.value.extra["validIdentifiers"] == []
    assert caught.value.extra["nextAction"] == "This event asks no questions: call again without answers."
    assert register(person, event).registration.answers == {}


def test_answers_to_an_event_without_questions_are_pointed_at_its_ticket_types(person):
    event = paid_event(prices={"student": 300, "regular": 600})
    with pytest.raises(AnswersInvalid) as caught:
        register(person, event, answers={"student": "yes"})
    assert caught.value.extra["nextAction"] == (
        "This event asks no questions: call again without answers. The ticket type the person chose "
        "goes in ticket_type, one of: student, regular."
    )
    assert not Registration.objects.exists()


def test_the_person_changes_their_answers_until_the_event_starts(person, workshop):
    register(person, workshop, answers={"diet": "none", "photos": True})
    Registration.objects.update(
        answers={**Registration.objects.get().answers, "table": {"value": "7", "label": {}}}
    )
    before = version(person)
    changed = actions.call(
        "update_registration_answers",
        visitor=person,
        channel="ui",
        event_id=workshop.public_id,
        answers={"diet": "vegetarian", "photos": True},
    )
    stored = Registration.objects.get().answers
    assert changed.changed and stored["diet"]["value"] == "vegetarian"
    assert stored["table"] == {"value": "7", "label": {}}  # the organisers' answer stays
    assert version(person) == before + 1
    again = actions.call(
        "update_registration_answers",
        visitor=person,
        channel="ui",
        event_id=workshop.public_id,
        answers={"diet": "vegetarian", "photos": True},
    )
    assert (again.changed, version(person)) == (False, before + 1)


def test_answers_cannot_change_after_the_organisers_closed_changes(person, workshop):
    register(person, workshop, answers={"diet": "none", "photos": True})
    Event.objects.filter(pk=workshop.pk).update(answers_close_at=timezone.now() - timedelta(minutes=1))
    with pytest.raises(AnswersClosed):
        actions.call(
            "update_registration_answers",
            visitor=person,
            channel="ui",
            event_id=workshop.public_id,
            answers={"diet": "vegetarian", "photos": True},
        )
    assert Registration.objects.get().answers["diet"]["value"] == "none"


# ── approval ──────────────────────────────────────────────────────────────────────────────────


@pytest.fixture
def approval_event() -> Event:
    return EventFactory(capacity=1, requires_approval=True)


def test_a_registration_waits_for_approval_holding_its_seat_without_a_ticket(
    person, approval_event, stranger
):
    with translation.override("en"):  # the e-mail is in the language the person registered in
        result = register(person, approval_event)
    registration = Registration.objects.get()
    assert (registration.status, registration.ticket_code, result.registration.is_pending) == (
        RegistrationStatus.PENDING_APPROVAL,
        None,
        True,
    )
    assert Event.objects.get(pk=approval_event.pk).seats_taken == 1
    assert register(person, approval_event).already_registered  # still theirs
    from events.errors import EventFull

    with pytest.raises(EventFull):
        register(stranger, approval_event)
    run_tasks()
    assert "waiting for the organisers" in mail.outbox[-1].body


def test_a_manager_approves_and_the_person_gets_their_ticket(person, approval_event, organiser):
    register(person, approval_event)
    pk = Registration.objects.get().pk
    before = version(person)
    result = actions.call("approve_registration", visitor=organiser, channel="api", registration_id=pk)
    registration = Registration.objects.get()
    assert (result.changed, registration.status) == (True, RegistrationStatus.CONFIRMED)
    assert registration.ticket_code
    assert version(person) == before + 1
    again = actions.call("approve_registration", visitor=organiser, channel="api", registration_id=pk)
    assert again.changed is False
    with pytest.raises(NotPendingApproval):
        actions.call("decline_registration", visitor=organiser, channel="api", registration_id=pk)
    run_tasks()
    assert Notification.objects.filter(kind="registration_approved").count() == 1


def test_a_decline_frees_the_seat_for_the_first_person_waiting(person, approval_event, organiser, stranger):
    register(person, approval_event)
    actions.call("join_waitlist", visitor=stranger, channel="api", event_id=approval_event.public_id)
    pk = Registration.objects.get().pk
    actions.call("decline_registration", visitor=organiser, channel="admin", registration_id=pk)
    assert Registration.objects.get().status == RegistrationStatus.DECLINED
    assert WaitlistEntry.objects.get().status == WaitlistStatus.OFFERED
    run_tasks()
    kinds = set(Notification.objects.values_list("kind", flat=True))
    assert {"registration_declined", "waitlist_offer"} <= kinds


def test_only_the_events_managers_decide(person, approval_event):
    register(person, approval_event)
    outsider = Visitor(user=UserFactory(is_staff=True))
    from core.errors import PermissionDenied

    with pytest.raises(PermissionDenied):
        actions.call(
            "approve_registration",
            visitor=outsider,
            channel="api",
            registration_id=Registration.objects.get().pk,
        )
    assert Registration.objects.get().status == RegistrationStatus.PENDING_APPROVAL


def test_a_declined_person_may_ask_again(person, approval_event, organiser):
    register(person, approval_event)
    actions.call(
        "decline_registration",
        visitor=organiser,
        channel="api",
        registration_id=Registration.objects.get().pk,
    )
    assert register(person, approval_event).registration.status == RegistrationStatus.PENDING_APPROVAL
    assert RegistrationFactory._meta.model.objects.count() == 1
