"""save_event, the use case: who may save what, idempotence, stateVersion and its Activity row."""

from __future__ import annotations

import pytest

from core.errors import AuthRequired, DomainError
from events import actions
from events.errors import EventCancelled, EventNotFound
from events.models import Activity, SavedEvent
from events.services.saves import save_event
from tests.factories import EventFactory, SavedEventFactory

from .conftest import MODES, activity, version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def save(visitor, event_id):
    return actions.call("save_event", visitor=visitor, channel="api", event_id=event_id)


def test_a_signed_in_person_saves_to_the_account(person):
    event = EventFactory()
    result = save(person, event.public_id)
    assert (result.event, result.already_saved, result.state_version) == (event, False, 1)
    saved = SavedEvent.objects.get()
    assert (saved.event, saved.user, saved.visitor_token) == (event, person.user, "")


def test_an_anonymous_visitor_saves_to_the_session_token(anonymous):
    event = EventFactory()
    result = save(anonymous, event.public_id)
    assert (result.already_saved, result.state_version) == (False, 1)
    saved = SavedEvent.objects.get()
    assert (saved.event, saved.user, saved.visitor_token) == (event, None, anonymous.token)


def test_saving_twice_is_a_no_op_that_says_already_saved(person):
    event = EventFactory()
    save(person, event.public_id)
    again = save(person, event.public_id)
    assert (again.event, again.already_saved, again.state_version) == (event, True, 1)
    assert again.outcome == "ALREADY_SAVED"
    assert SavedEvent.objects.count() == 1
    assert version(person) == 1


def test_state_version_rises_once_per_new_save_and_only_for_that_visitor(person, stranger, anonymous):
    first, second = EventFactory(), EventFactory()
    assert [save(person, event.public_id).state_version for event in (first, second, first)] == [1, 2, 2]
    assert version(person) == 2
    assert version(stranger) == 0 and version(anonymous) == 0


def test_someone_elses_save_does_not_count_as_mine(person, stranger):
    event = EventFactory()
    SavedEventFactory(user=stranger.user, event=event)
    assert save(person, event.public_id).already_saved is False
    assert SavedEvent.objects.count() == 2


def test_a_started_event_can_still_be_saved(person):
    event = EventFactory(past=True)
    assert save(person, event.public_id).already_saved is False


def test_without_a_session_nothing_can_be_saved(nobody):
    event = EventFactory()
    with pytest.raises(AuthRequired) as raised:
        save(nobody, event.public_id)
    assert (raised.value.code, raised.value.reason) == ("AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert "session" in raised.value.message
    assert not SavedEvent.objects.exists()


def test_a_cancelled_event_cannot_be_saved(person):
    event = EventFactory(cancelled=True)
    with pytest.raises(EventCancelled) as raised:
        save(person, event.public_id)
    assert (raised.value.code, raised.value.reason) == ("CONFLICT", "EVENT_CANCELLED")
    assert not SavedEvent.objects.exists()
    assert version(person) == 0


@pytest.mark.parametrize(
    "event_id", [pytest.param("evt-draft", id="draft"), pytest.param("evt-nope", id="unknown")]
)
def test_a_draft_or_unknown_event_is_not_found(person, event_id):
    EventFactory(public_id="evt-draft", draft=True)
    with pytest.raises(EventNotFound) as raised:
        save(person, event_id)
    assert type(raised.value) is EventNotFound
    assert not SavedEvent.objects.exists()


# ── Activity ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("mode", MODES)
def test_each_call_records_one_row_with_its_outcome(person, mode):
    event = EventFactory()
    for _ in range(2):
        actions.call("save_event", visitor=person, channel=mode, event_id=event.public_id)
    assert activity() == [("save_event", mode, "OK"), ("save_event", mode, "ALREADY_SAVED")]
    assert set(Activity.objects.values_list("event_id", "user")) == {(event.pk, person.user.pk)}


@pytest.mark.parametrize(
    ("traits", "visitor", "reason"),
    [
        pytest.param({"cancelled": True}, "person", "EVENT_CANCELLED", id="cancelled"),
        pytest.param({"draft": True}, "person", "EVENT_NOT_FOUND", id="draft"),
        pytest.param({}, "nobody", "SIGN_IN_REQUIRED", id="no-session"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_a_refused_call_records_its_reason(request, traits, visitor, reason, mode):
    event = EventFactory(**traits)
    with pytest.raises(DomainError):
        actions.call(
            "save_event", visitor=request.getfixturevalue(visitor), channel=mode, event_id=event.public_id
        )
    assert activity() == [("save_event", mode, reason)]
    assert Activity.objects.get().event_id == event.pk


def test_a_page_redrawn_records_nothing(person):
    event = EventFactory()
    save_event(visitor=person, event_id=event.public_id)
    assert activity() == []
    assert SavedEvent.objects.count() == 1  # the call itself still happened
