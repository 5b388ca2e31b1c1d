"""get_event_details, the use case: which events can be opened, and the visitor's own state."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from events import actions
from events.choices import RegistrationStatus
from events.errors import EventNotFound
from events.models import Activity
from events.selectors import get_event_details
from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory, WaitlistEntryFactory

from .conftest import MODES, activity

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def details(visitor, event_id):
    return actions.call("get_event_details", visitor=visitor, channel="api", event_id=event_id)


@pytest.mark.parametrize(
    ("traits", "status"),
    [
        pytest.param({}, "published", id="published-upcoming"),
        pytest.param({"past": True}, "published", id="published-started"),
        pytest.param({"cancelled": True}, "cancelled", id="cancelled-is-shown-as-cancelled"),
    ],
)
def test_a_public_event_can_be_opened(nobody, traits, status):
    event = EventFactory(**traits)
    result = details(nobody, event.public_id)
    assert result.event == event and result.event.status == status
    assert result.is_saved is False and result.registration is None and result.is_registered is False


@pytest.mark.parametrize(
    "event_id",
    [pytest.param("evt-draft", id="draft"), pytest.param("evt-missing", id="unknown")],
)
def test_a_draft_or_unknown_event_is_not_found(person, event_id):
    EventFactory(public_id="evt-draft", draft=True)
    with pytest.raises(EventNotFound) as raised:
        details(person, event_id)
    assert type(raised.value) is EventNotFound
    assert (raised.value.code, raised.value.reason) == ("NOT_FOUND", "EVENT_NOT_FOUND")


def test_seats_are_counted_from_confirmed_registrations_only(nobody):
    event = EventFactory(capacity=5)
    RegistrationFactory.create_batch(2, event=event)
    RegistrationFactory(event=event, status=RegistrationStatus.CANCELLED)
    found = details(nobody, event.public_id).event
    assert (found.confirmed_count, found.seats_left) == (2, 3)


# ── saved ─────────────────────────────────────────────────────────────────────────────────────


def test_saved_is_true_for_the_account_that_saved(person, stranger):
    event = EventFactory()
    SavedEventFactory(user=person.user, event=event)
    assert details(person, event.public_id).is_saved is True
    assert details(stranger, event.public_id).is_saved is False


def test_saved_is_true_for_the_session_that_saved(anonymous, nobody, person):
    event = EventFactory()
    SavedEventFactory(user=None, visitor_token=anonymous.token, event=event)
    assert details(anonymous, event.public_id).is_saved is True
    assert details(nobody, event.public_id).is_saved is False
    assert details(person, event.public_id).is_saved is False


def test_saved_still_shows_on_a_cancelled_event(person):
    event = EventFactory(cancelled=True)
    SavedEventFactory(user=person.user, event=event)
    assert details(person, event.public_id).is_saved is True


# ── registered ────────────────────────────────────────────────────────────────────────────────


def test_registered_is_true_for_an_active_registration(person, stranger):
    event = EventFactory()
    registration = RegistrationFactory(user=person.user, event=event)
    mine = details(person, event.public_id)
    assert mine.registration == registration and mine.is_registered is True
    theirs = details(stranger, event.public_id)
    assert theirs.registration is None and theirs.is_registered is False


def test_a_cancelled_registration_is_returned_but_is_not_registered(person):
    event = EventFactory()
    registration = RegistrationFactory(user=person.user, event=event, status=RegistrationStatus.CANCELLED)
    result = details(person, event.public_id)
    assert result.registration == registration and result.is_registered is False


def test_an_anonymous_visitor_has_no_registration(anonymous):
    event = EventFactory()
    RegistrationFactory(event=event)
    result = details(anonymous, event.public_id)
    assert result.registration is None and result.is_registered is False


def test_what_the_person_holds_is_read_only_when_they_hold_it(person, stranger):
    """One statement for the event, its seats and whether the person saved it, holds a registration or
    waits; a second only for what they hold (the page a browser shows before and after registering)."""
    event = EventFactory(capacity=1)
    with CaptureQueriesContext(connection) as holding_nothing:
        found = get_event_details(visitor=person, event_id=event.public_id)
    assert (found.registration, found.waitlist, found.is_saved) == (None, None, False)
    registration = RegistrationFactory(user=person.user, event=event)
    WaitlistEntryFactory(user=stranger.user, event=event)
    with CaptureQueriesContext(connection) as registered:
        found = get_event_details(visitor=person, event_id=event.public_id)
    assert (found.registration, found.waitlist, found.event.seats_left) == (registration, None, 0)
    assert found.registration.event is found.event  # what the page reads of it is not read again
    with CaptureQueriesContext(connection) as waiting:
        place = get_event_details(visitor=stranger, event_id=event.public_id).waitlist
    assert place is not None and (place.entry.user, place.position) == (stranger.user, 1)
    assert (len(holding_nothing), len(registered), len(waiting)) == (1, 2, 3)  # the place: its position


# ── Activity ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("mode", MODES)
def test_each_call_records_one_row_with_its_mode_and_event(person, mode):
    event = EventFactory()
    actions.call("get_event_details", visitor=person, channel=mode, event_id=event.public_id)
    assert activity() == [("get_event_details", mode, "OK")]
    row = Activity.objects.get()
    assert (row.event_id, row.user) == (event.pk, person.user)


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_call_records_its_reason(anonymous, mode):
    draft = EventFactory(draft=True)
    for event_id in (draft.public_id, "evt-missing"):
        with pytest.raises(EventNotFound):
            actions.call("get_event_details", visitor=anonymous, channel=mode, event_id=event_id)
    assert activity() == [("get_event_details", mode, "EVENT_NOT_FOUND")] * 2
    assert list(Activity.objects.order_by("id").values_list("event_id", "visitor_token")) == [
        (draft.pk, anonymous.token),
        (None, anonymous.token),
    ]


def test_a_page_redrawn_records_nothing(person):
    event = EventFactory()
    get_event_details(visitor=person, event_id=event.public_id)
    with pytest.raises(EventNotFound):
        get_event_details(visitor=person, event_id="evt-missing")
    assert activity() == []
