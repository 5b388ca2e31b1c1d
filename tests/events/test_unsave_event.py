"""unsave_event, the use case: removes only the visitor's own save, idempotently."""

from __future__ import annotations

import pytest

from events import actions
from events.errors import EventNotFound
from events.models import Activity, SavedEvent
from events.services.saves import unsave_event
from tests.factories import EventFactory, SavedEventFactory

from .conftest import MODES, activity, version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def unsave(visitor, event_id):
    return actions.call("unsave_event", visitor=visitor, channel="api", event_id=event_id)


def test_unsaving_removes_the_save_and_raises_the_state_version(person):
    event = EventFactory()
    actions.call("save_event", visitor=person, channel="api", event_id=event.public_id)
    result = unsave(person, event.public_id)
    assert (result.event, result.was_saved, result.state_version) == (event, True, 2)
    assert not SavedEvent.objects.exists()


def test_unsaving_twice_changes_nothing_and_says_it_was_not_saved(person):
    event = EventFactory()
    SavedEventFactory(user=person.user, event=event)
    unsave(person, event.public_id)
    again = unsave(person, event.public_id)
    assert (again.was_saved, again.state_version, again.outcome) == (False, 1, "NOT_SAVED")
    assert version(person) == 1


def test_unsaving_what_was_never_saved_is_not_an_error(person):
    event = EventFactory()
    result = unsave(person, event.public_id)
    assert (result.was_saved, result.state_version) == (False, 0)


def test_an_anonymous_visitor_removes_the_sessions_save(anonymous):
    event = EventFactory()
    SavedEventFactory(user=None, visitor_token=anonymous.token, event=event)
    assert unsave(anonymous, event.public_id).was_saved is True
    assert not SavedEvent.objects.exists()


@pytest.mark.parametrize("visitor", ["person", "anonymous", "nobody"])
def test_only_the_visitors_own_save_is_removed(request, visitor, stranger):
    event = EventFactory()
    theirs = SavedEventFactory(user=stranger.user, event=event)
    by_token = SavedEventFactory(user=None, visitor_token="someone-elses-token", event=event)
    assert unsave(request.getfixturevalue(visitor), event.public_id).was_saved is False
    assert set(SavedEvent.objects.all()) == {theirs, by_token}
    assert version(stranger) == 0


def test_the_save_of_a_cancelled_event_can_be_removed(person):
    event = EventFactory(cancelled=True)
    SavedEventFactory(user=person.user, event=event)
    assert unsave(person, event.public_id).was_saved is True


@pytest.mark.parametrize(
    "event_id", [pytest.param("evt-draft", id="draft"), pytest.param("evt-nope", id="unknown")]
)
def test_a_draft_or_unknown_event_is_not_found(person, event_id):
    draft = EventFactory(public_id="evt-draft", draft=True)
    SavedEventFactory(user=person.user, event=draft)
    with pytest.raises(EventNotFound) as raised:
        unsave(person, event_id)
    assert type(raised.value) is EventNotFound
    assert SavedEvent.objects.count() == 1


# ── Activity ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("mode", MODES)
def test_each_call_records_one_row_with_its_outcome(person, mode):
    event = EventFactory()
    SavedEventFactory(user=person.user, event=event)
    for _ in range(2):
        actions.call("unsave_event", visitor=person, channel=mode, event_id=event.public_id)
    assert activity() == [("unsave_event", mode, "OK"), ("unsave_event", mode, "NOT_SAVED")]
    assert set(Activity.objects.values_list("event_id", flat=True)) == {event.pk}


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_call_records_its_reason(person, mode):
    with pytest.raises(EventNotFound):
        actions.call("unsave_event", visitor=person, channel=mode, event_id="evt-nope")
    assert activity() == [("unsave_event", mode, "EVENT_NOT_FOUND")]


def test_a_page_redrawn_records_nothing(person):
    event = EventFactory()
    SavedEventFactory(user=person.user, event=event)
    unsave_event(visitor=person, event_id=event.public_id)
    assert activity() == []
    assert not SavedEvent.objects.exists()
