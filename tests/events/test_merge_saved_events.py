"""merge_saved_events, the use case: a session's saves move to the account signed in to."""

from __future__ import annotations

import pytest

from events.models import SavedEvent
from events.services.saves import merge_saved_events
from tests.factories import EventFactory, SavedEventFactory

from .conftest import version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TOKEN = "anon-token-0001"


def saves_of(**owner) -> set[int]:
    return set(SavedEvent.objects.filter(**owner).values_list("event_id", flat=True))


def test_the_sessions_saves_move_to_the_account(person):
    first, second = EventFactory(), EventFactory()
    for event in (first, second):
        SavedEventFactory(user=None, visitor_token=TOKEN, event=event)
    assert merge_saved_events(token=TOKEN, user=person.user) == 2
    assert saves_of(user=person.user) == {first.pk, second.pk}
    assert not SavedEvent.objects.filter(visitor_token=TOKEN).exists()
    assert version(person) == 1  # once for the whole merge


def test_an_event_already_saved_by_the_account_is_kept_once_and_not_counted(person):
    both, only_session = EventFactory(), EventFactory()
    SavedEventFactory(user=person.user, event=both)
    SavedEventFactory(user=None, visitor_token=TOKEN, event=both)
    SavedEventFactory(user=None, visitor_token=TOKEN, event=only_session)
    assert merge_saved_events(token=TOKEN, user=person.user) == 1
    assert SavedEvent.objects.filter(user=person.user).count() == 2
    assert saves_of(user=person.user) == {both.pk, only_session.pk}
    assert not SavedEvent.objects.filter(visitor_token=TOKEN).exists()


def test_nothing_new_changes_no_state_version(person):
    event = EventFactory()
    SavedEventFactory(user=person.user, event=event)
    SavedEventFactory(user=None, visitor_token=TOKEN, event=event)
    assert merge_saved_events(token=TOKEN, user=person.user) == 0
    assert version(person) == 0
    assert not SavedEvent.objects.filter(visitor_token=TOKEN).exists()


def test_a_session_without_saves_merges_nothing(person):
    assert merge_saved_events(token=TOKEN, user=person.user) == 0
    assert version(person) == 0


def test_an_empty_token_touches_nothing(person):
    orphan = SavedEventFactory(user=None, visitor_token="someone-else")
    assert merge_saved_events(token="", user=person.user) == 0
    assert list(SavedEvent.objects.all()) == [orphan]


def test_other_sessions_and_accounts_are_left_alone(person, stranger):
    event = EventFactory()
    SavedEventFactory(user=None, visitor_token=TOKEN, event=event)
    other_session = SavedEventFactory(user=None, visitor_token="another-token", event=event)
    theirs = SavedEventFactory(user=stranger.user, event=event)
    merge_saved_events(token=TOKEN, user=person.user)
    assert set(SavedEvent.objects.exclude(user=person.user)) == {other_session, theirs}
    assert version(stranger) == 0
