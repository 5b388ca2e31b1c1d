"""merge_saved_events, the row the sign-in performs: a session's saves move to the account signed in to,
with its Activity row."""

from __future__ import annotations

import pytest

from core.errors import InvalidInput
from core.visitors import Visitor
from events import actions
from events.models import Activity, SavedEvent
from tests.factories import EventFactory, SavedEventFactory

from .conftest import version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TOKEN = "anon-token-0001"


def merge_saved_events(*, token: str, user) -> int:
    result = actions.call("merge_saved_events", visitor=Visitor(user=user), channel="ui", token=token)
    return result.merged


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


def test_an_empty_token_is_refused_and_touches_nothing(person):
    orphan = SavedEventFactory(user=None, visitor_token="someone-else")
    with pytest.raises(InvalidInput):
        merge_saved_events(token="", user=person.user)
    assert list(SavedEvent.objects.all()) == [orphan]


def test_the_merge_has_its_activity_row_without_the_token(person):
    SavedEventFactory(user=None, visitor_token=TOKEN, event=EventFactory())
    merge_saved_events(token=TOKEN, user=person.user)
    [row] = Activity.objects.filter(action="merge_saved_events")
    assert (row.mode, row.outcome, row.user_id, row.visitor_token) == ("ui", "OK", person.user.pk, "")


def test_other_sessions_and_accounts_are_left_alone(person, stranger):
    event = EventFactory()
    SavedEventFactory(user=None, visitor_token=TOKEN, event=event)
    other_session = SavedEventFactory(user=None, visitor_token="another-token", event=event)
    theirs = SavedEventFactory(user=stranger.user, event=event)
    merge_saved_events(token=TOKEN, user=person.user)
    assert set(SavedEvent.objects.exclude(user=person.user)) == {other_session, theirs}
    assert version(stranger) == 0
