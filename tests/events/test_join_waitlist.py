"""join_waitlist and leave_waitlist, the use cases: who may wait, positions, idempotence, declining."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import AuthRequired
from core.visitors import Visitor
from events import actions
from events.choices import WaitlistStatus
from events.errors import (
    AlreadyRegistered,
    EventCancelled,
    EventNotFound,
    RegistrationClosed,
    SeatsAvailable,
    WaitlistClosed,
)
from events.models import WaitlistEntry
from tests.factories import EventFactory, RegistrationFactory, UserFactory

from .conftest import activity, version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def join(visitor, event):
    return actions.call("join_waitlist", visitor=visitor, channel="api", event_id=event.public_id)


def leave(visitor, event):
    return actions.call("leave_waitlist", visitor=visitor, channel="api", event_id=event.public_id)


@pytest.fixture
def full_event():
    event = EventFactory(capacity=1)
    RegistrationFactory(event=event)
    return event


def people(n: int) -> list[Visitor]:
    return [Visitor(user=UserFactory()) for _ in range(n)]


def test_people_join_a_full_event_first_come_first_served(full_event):
    places = [join(visitor, full_event).place.position for visitor in people(3)]
    assert places == [1, 2, 3]
    assert WaitlistEntry.objects.filter(status=WaitlistStatus.WAITING).count() == 3


def test_joining_twice_answers_the_same_place_and_changes_nothing(person, full_event):
    first = join(person, full_event)
    again = join(person, full_event)
    assert (first.already_waiting, again.already_waiting) == (False, True)
    assert again.place.position == first.place.position == 1
    assert (first.state_version, again.state_version, version(person)) == (1, 1, 1)
    assert WaitlistEntry.objects.count() == 1
    assert [row[2] for row in activity()] == ["OK", "ALREADY_WAITING"]


def test_a_free_seat_means_register_instead(person):
    event = EventFactory(capacity=2)
    RegistrationFactory(event=event)
    with pytest.raises(SeatsAvailable) as refusal:
        join(person, event)
    assert "register" in refusal.value.next_action
    assert not WaitlistEntry.objects.exists()


@pytest.mark.parametrize(
    ("make", "refusal"),
    [
        pytest.param(lambda: EventFactory(capacity=1, cancelled=True), EventCancelled, id="cancelled"),
        pytest.param(lambda: EventFactory(capacity=1, draft=True), EventNotFound, id="draft"),
        pytest.param(lambda: EventFactory(capacity=1, past=True), RegistrationClosed, id="started"),
        pytest.param(
            lambda: EventFactory(capacity=1, starts_at=timezone.now() + timedelta(hours=1)),
            WaitlistClosed,
            id="starts-within-two-hours",
        ),
    ],
)
def test_refusals_write_nothing(person, make, refusal):
    event = make()
    RegistrationFactory(event=event)
    with pytest.raises(refusal):
        join(person, event)
    assert not WaitlistEntry.objects.exists()
    assert version(person) == 0


def test_joining_needs_an_account(anonymous, full_event):
    with pytest.raises(AuthRequired):
        join(anonymous, full_event)


def test_a_registered_person_has_nothing_to_wait_for(person):
    event = EventFactory(capacity=1)
    RegistrationFactory(event=event, user=person.user)
    with pytest.raises(AlreadyRegistered):
        join(person, event)


def test_leaving_ends_the_entry_and_moves_everyone_up(person, full_event):
    join(person, full_event)
    behind = people(2)
    for visitor in behind:
        join(visitor, full_event)
    result = leave(person, full_event)
    assert (result.was_waiting, result.declined_offer, result.outcome) == (True, False, "OK")
    assert WaitlistEntry.objects.get(user=person.user).status == WaitlistStatus.LEFT
    assert [join(visitor, full_event).place.position for visitor in behind] == [1, 2]


def test_leaving_when_not_waiting_changes_nothing(person, full_event):
    result = leave(person, full_event)
    assert (result.was_waiting, result.outcome, result.state_version) == (False, "NOT_WAITING", 0)


def test_joining_again_after_leaving_starts_at_the_back(person, full_event):
    join(person, full_event)
    other = people(1)[0]
    join(other, full_event)
    leave(person, full_event)
    assert join(person, full_event).place.position == 2
    assert WaitlistEntry.objects.filter(user=person.user).count() == 2  # the old entry is kept, ended
