"""list_saved, the use case: the visitor's own saves that can still be opened, newest save first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from events.choices import RegistrationStatus
from events.models import SavedEvent
from events.selectors import list_saved
from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def saved_at(save: SavedEvent, minutes_ago: int) -> None:
    SavedEvent.objects.filter(pk=save.pk).update(created_at=timezone.now() - timedelta(minutes=minutes_ago))


def test_newest_save_first_whatever_the_events_order(person):
    first, second, third = EventFactory(), EventFactory(), EventFactory()
    saved_at(SavedEventFactory(user=person.user, event=second), minutes_ago=30)
    saved_at(SavedEventFactory(user=person.user, event=third), minutes_ago=20)
    saved_at(SavedEventFactory(user=person.user, event=first), minutes_ago=10)
    assert list_saved(visitor=person) == [first, third, second]


def test_only_the_visitors_own_saves(person, stranger, anonymous):
    mine, theirs, the_sessions = EventFactory(), EventFactory(), EventFactory()
    SavedEventFactory(user=person.user, event=mine)
    SavedEventFactory(user=stranger.user, event=theirs)
    SavedEventFactory(user=None, visitor_token=anonymous.token, event=the_sessions)
    assert list_saved(visitor=person) == [mine]
    assert list_saved(visitor=stranger) == [theirs]
    assert list_saved(visitor=anonymous) == [the_sessions]


def test_an_event_others_saved_too_is_listed_once(person, stranger, anonymous):
    event = EventFactory()
    for owner in (person, stranger):
        SavedEventFactory(user=owner.user, event=event)
    SavedEventFactory(user=None, visitor_token=anonymous.token, event=event)
    assert list_saved(visitor=person) == [event]


def test_a_visitor_without_session_has_no_saves(nobody):
    SavedEventFactory(user=None, visitor_token="some-token")
    assert list_saved(visitor=nobody) == []


@pytest.mark.parametrize(
    ("traits", "listed"),
    [
        pytest.param({}, True, id="published"),
        pytest.param({"past": True}, True, id="started"),
        pytest.param({"cancelled": True}, True, id="cancelled-still-listed"),
        pytest.param({"draft": True}, False, id="draft-hidden"),
    ],
)
def test_only_events_that_can_be_opened_are_listed(person, traits, listed):
    event = EventFactory(**traits)
    SavedEventFactory(user=person.user, event=event)
    assert list_saved(visitor=person) == ([event] if listed else [])


def test_seats_are_annotated(person):
    event = EventFactory(capacity=3)
    RegistrationFactory(event=event)
    RegistrationFactory(event=event, status=RegistrationStatus.CANCELLED)
    SavedEventFactory(user=person.user, event=event)
    [listed] = list_saved(visitor=person)
    assert (listed.confirmed_count, listed.seats_left) == (1, 2)
