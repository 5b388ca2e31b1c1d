"""update_staff_answers: an event's managers fill in their own (organisers-only) questions for one
registration; the person's answers stay as they were and the person never sees these; anyone else is
refused. Over the API with a session or a token with `registrations:manage` (as approval is)."""

from __future__ import annotations

import json

import pytest

from accounts.tokens import create_access_token
from core.errors import DomainError
from core.visitors import Mode, Visitor
from events import actions
from events.choices import StaffRole
from events.contract import RegistrationSerializer
from events.errors import AnswersInvalid
from events.models import Activity, EventStaff, Registration
from events.scopes import REGISTRATIONS_MANAGE, REGISTRATIONS_WRITE
from tests.api.conftest import ApiClient
from tests.factories import EventFactory, QuestionFactory, UserFactory, choice_question

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def setting():
    """An event asking the person their company, and its organisers a seat row (theirs only)."""
    event = EventFactory(capacity=10)
    QuestionFactory(event=event, identifier="company", required=True)
    choice_question(event, "seat_row", ["front", "back"], staff_only=True)
    person, manager = UserFactory(), UserFactory()
    EventStaff.objects.create(event=event, user=manager, role=StaffRole.MANAGER)
    actions.call(
        "register_event",
        visitor=Visitor(user=person),
        channel=Mode.UI,
        event_id=event.public_id,
        answers={"company": "ACME"},
    )
    return event, person, manager, Registration.objects.get(user=person)


def fill(user, registration, answers, channel=Mode.ADMIN):
    return actions.call(
        "update_staff_answers",
        visitor=Visitor(user=user),
        channel=channel,
        registration_id=registration.pk,
        answers=answers,
    )


def test_a_manager_fills_their_question_and_the_persons_answers_stay(setting):
    event, _, manager, registration = setting
    result = fill(manager, registration, {"seat_row": "front"})
    assert result.changed
    registration.refresh_from_db()
    assert registration.answers["company"]["value"] == "ACME"
    assert registration.answers["seat_row"]["value"] == "front"
    assert "seat_row" not in RegistrationSerializer(registration).data["answers"]  # the person's view
    assert not fill(manager, registration, {"seat_row": "front"}).changed
    row = Activity.objects.filter(action="update_staff_answers").first()
    assert (row.mode, row.user_id, row.event_id) == ("admin", manager.pk, event.pk)


def test_the_persons_later_change_keeps_the_organisers_answer(setting):
    event, person, manager, registration = setting
    fill(manager, registration, {"seat_row": "back"})
    actions.call(
        "update_registration_answers",
        visitor=Visitor(user=person),
        channel=Mode.UI,
        event_id=event.public_id,
        answers={"company": "Other"},
    )
    registration.refresh_from_db()
    assert registration.answers["seat_row"]["value"] == "back"


def test_only_the_organisers_questions_and_only_their_options(setting):
    _, _, manager, registration = setting
    with pytest.raises(AnswersInvalid) as refused:
        fill(manager, registration, {"company": "Forged", "seat_row": "middle"})
    assert set(refused.value.extra["fields"]) == {"answers.company", "answers.seat_row"}
    registration.refresh_from_db()
    assert registration.answers["company"]["value"] == "ACME" and "seat_row" not in registration.answers


def test_the_person_and_door_staff_are_refused(setting):
    event, person, _, registration = setting
    door = UserFactory()
    EventStaff.objects.create(event=event, user=door, role=StaffRole.DOOR)
    for who in (person, door):
        with pytest.raises(DomainError) as refused:
            fill(who, registration, {"seat_row": "front"})
        assert refused.value.reason == "NOT_ORGANISER"


def _token(user, scope: str) -> dict[str, str]:
    _, raw = create_access_token(user=user, name="organiser's script", scopes=[scope], days=1)
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}", "content_type": "application/json"}


def test_a_managers_token_needs_registrations_manage_over_the_api(setting):
    _, _, manager, registration = setting
    url = f"/api/registrations/{registration.pk}/staff-answers"
    body = json.dumps({"answers": {"seat_row": "back"}})
    narrow = ApiClient().put(url, body, **_token(manager, REGISTRATIONS_WRITE))
    assert narrow.status_code == 403 and narrow.json()["reason"] == "INSUFFICIENT_SCOPE"
    headers = _token(manager, REGISTRATIONS_MANAGE)
    done = ApiClient().put(url, body, **headers)
    assert done.status_code == 200, done.content
    assert done.json()["answers"]["seat_row"]["value"] == "back" and done.json()["changed"] is True
    unknown = ApiClient().put(url, json.dumps({"answers": {}, "extra": 1}), **headers)
    assert unknown.status_code == 400


def test_a_managers_token_approves_and_declines_with_registrations_manage(setting):
    event = EventFactory(requires_approval=True, capacity=5)
    manager = UserFactory()
    EventStaff.objects.create(event=event, user=manager, role=StaffRole.MANAGER)
    people = [UserFactory() for _ in range(2)]
    for person in people:
        actions.call(
            "register_event", visitor=Visitor(user=person), channel=Mode.UI, event_id=event.public_id
        )
    first, second = Registration.objects.filter(event=event).order_by("pk")
    narrow = ApiClient().post(
        f"/api/registrations/{first.pk}/approve", **_token(manager, REGISTRATIONS_WRITE)
    )
    assert narrow.status_code == 403 and narrow.json()["reason"] == "INSUFFICIENT_SCOPE"
    headers = _token(manager, REGISTRATIONS_MANAGE)
    assert ApiClient().post(f"/api/registrations/{first.pk}/approve", **headers).json()["changed"] is True
    declined = ApiClient().post(f"/api/registrations/{second.pk}/decline", **headers)
    assert declined.status_code == 200 and declined.json()["registration"]["status"] == "declined"
    # The scope is only as good as the person's part: someone else's token with it is refused.
    stranger = ApiClient().post(
        f"/api/registrations/{first.pk}/approve", **_token(UserFactory(), REGISTRATIONS_MANAGE)
    )
    assert stranger.status_code == 403
