"""cancel_registration, the use case: whose registration, until when, idempotence, the freed seat."""

from __future__ import annotations

import pytest

from core.errors import AuthRequired, DomainError
from events import actions
from events.choices import RegistrationStatus
from events.errors import EventNotFound, RegistrationClosed, RegistrationNotFound
from events.models import Activity, Registration
from events.services.registrations import cancel_registration
from tests.factories import EventFactory, RegistrationFactory

from .conftest import MODES, activity, version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def cancel(visitor, event_id):
    return actions.call("cancel_registration", visitor=visitor, channel="api", event_id=event_id)


def test_cancelling_ends_the_registration_and_raises_the_state_version(person):
    event = EventFactory()
    registration = RegistrationFactory(user=person.user, event=event)
    result = cancel(person, event.public_id)
    assert (result.registration.pk, result.already_cancelled, result.state_version) == (
        registration.pk,
        False,
        1,
    )
    assert (result.event, result.outcome) == (event, "OK")
    registration.refresh_from_db()
    assert registration.status == RegistrationStatus.CANCELLED


def test_cancelling_again_says_already_cancelled_and_changes_nothing(person):
    event = EventFactory()
    RegistrationFactory(user=person.user, event=event)
    cancel(person, event.public_id)
    again = cancel(person, event.public_id)
    assert (again.already_cancelled, again.state_version, again.outcome) == (True, 1, "ALREADY_CANCELLED")
    assert version(person) == 1
    assert Registration.objects.get().status == RegistrationStatus.CANCELLED


def test_already_cancelled_is_answered_even_after_the_start(person):
    event = EventFactory(past=True)
    RegistrationFactory(user=person.user, event=event, status=RegistrationStatus.CANCELLED)
    assert cancel(person, event.public_id).already_cancelled is True


def test_without_a_registration_there_is_nothing_to_cancel(person):
    event = EventFactory()
    with pytest.raises(RegistrationNotFound) as raised:
        cancel(person, event.public_id)
    assert (raised.value.code, raised.value.reason) == ("NOT_FOUND", "REGISTRATION_NOT_FOUND")


def test_someone_elses_registration_is_not_found_and_stays(person, other_user):
    event = EventFactory()
    theirs = RegistrationFactory(user=other_user, event=event)
    with pytest.raises(RegistrationNotFound):
        cancel(person, event.public_id)
    theirs.refresh_from_db()
    assert theirs.status == RegistrationStatus.CONFIRMED


@pytest.mark.parametrize("visitor", ["anonymous", "nobody"])
def test_cancelling_needs_an_account(request, visitor):
    event = EventFactory()
    with pytest.raises(AuthRequired) as raised:
        cancel(request.getfixturevalue(visitor), event.public_id)
    assert raised.value.reason == "SIGN_IN_REQUIRED"


def test_a_started_event_cannot_be_cancelled_and_the_registration_stays(person):
    event = EventFactory(past=True)
    RegistrationFactory(user=person.user, event=event)
    with pytest.raises(RegistrationClosed) as raised:
        cancel(person, event.public_id)
    assert (raised.value.code, raised.value.reason) == ("CONFLICT", "REGISTRATION_CLOSED")
    assert "cancelled" in raised.value.message
    assert Registration.objects.get().status == RegistrationStatus.CONFIRMED
    assert version(person) == 0


def test_a_registration_for_a_cancelled_event_can_be_cancelled(person):
    event = EventFactory(cancelled=True)
    RegistrationFactory(user=person.user, event=event)
    assert cancel(person, event.public_id).already_cancelled is False


@pytest.mark.parametrize(
    "event_id", [pytest.param("evt-draft", id="draft"), pytest.param("evt-nope", id="unknown")]
)
def test_a_draft_or_unknown_event_is_not_found(person, event_id):
    draft = EventFactory(public_id="evt-draft", draft=True)
    RegistrationFactory(user=person.user, event=draft)
    with pytest.raises(EventNotFound) as raised:
        cancel(person, event_id)
    assert type(raised.value) is EventNotFound
    assert Registration.objects.get().status == RegistrationStatus.CONFIRMED


def test_cancelling_frees_the_seat_for_someone_else(person, stranger):
    event = EventFactory(capacity=1)
    actions.call("register_event", visitor=person, channel="api", event_id=event.public_id)
    cancel(person, event.public_id)
    assert (
        actions.call("register_event", visitor=stranger, channel="api", event_id=event.public_id).created
        is True
    )
    assert (
        Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).get().user
        == stranger.user
    )


# ── Activity ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("mode", MODES)
def test_each_call_records_one_row_with_its_outcome(person, mode):
    event = EventFactory()
    RegistrationFactory(user=person.user, event=event)
    for _ in range(2):
        actions.call("cancel_registration", visitor=person, channel=mode, event_id=event.public_id)
    assert activity() == [
        ("cancel_registration", mode, "OK"),
        ("cancel_registration", mode, "ALREADY_CANCELLED"),
    ]
    assert set(Activity.objects.values_list("event_id", "user")) == {(event.pk, person.user.pk)}


@pytest.mark.parametrize(
    ("visitor", "registered", "traits", "reason"),
    [
        pytest.param("anonymous", False, {}, "SIGN_IN_REQUIRED", id="anonymous"),
        pytest.param("person", False, {}, "REGISTRATION_NOT_FOUND", id="not-registered"),
        pytest.param("person", True, {"past": True}, "REGISTRATION_CLOSED", id="started"),
        pytest.param("person", True, {"draft": True}, "EVENT_NOT_FOUND", id="draft"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_a_refused_call_records_its_reason(request, person, visitor, registered, traits, reason, mode):
    event = EventFactory(**traits)
    if registered:
        RegistrationFactory(user=person.user, event=event)
    with pytest.raises(DomainError):
        actions.call(
            "cancel_registration",
            visitor=request.getfixturevalue(visitor),
            channel=mode,
            event_id=event.public_id,
        )
    assert activity() == [("cancel_registration", mode, reason)]
    assert Activity.objects.get().event_id == event.pk


def test_a_page_redrawn_records_nothing(person):
    event = EventFactory()
    RegistrationFactory(user=person.user, event=event)
    cancel_registration(visitor=person, event_id=event.public_id)
    assert activity() == []
    assert Registration.objects.get().status == RegistrationStatus.CANCELLED
