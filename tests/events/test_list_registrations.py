"""list_registrations, the use case: an account's own registrations, newest change first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import AuthRequired
from events import actions
from events.choices import RegistrationStatus
from events.models import Registration
from events.selectors import list_registrations
from tests.factories import EventFactory, RegistrationFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

CONFIRMED, CANCELLED = RegistrationStatus.CONFIRMED, RegistrationStatus.CANCELLED


def changed(registration: Registration, minutes_ago: int) -> Registration:
    Registration.objects.filter(pk=registration.pk).update(
        updated_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return registration


@pytest.mark.parametrize("visitor", ["anonymous", "nobody"])
def test_registrations_need_an_account(request, visitor):
    RegistrationFactory()
    with pytest.raises(AuthRequired) as raised:
        list_registrations(visitor=request.getfixturevalue(visitor))
    assert (raised.value.code, raised.value.reason) == ("AUTH_REQUIRED", "SIGN_IN_REQUIRED")


def test_only_the_accounts_own_registrations(person, stranger):
    mine = RegistrationFactory(user=person.user)
    theirs = RegistrationFactory(user=stranger.user, event=mine.event)
    assert list_registrations(visitor=person) == [mine]
    assert list_registrations(visitor=stranger) == [theirs]


def test_newest_change_first(person):
    older = changed(RegistrationFactory(user=person.user), minutes_ago=30)
    newer = changed(RegistrationFactory(user=person.user, status=CANCELLED), minutes_ago=5)
    middle = changed(RegistrationFactory(user=person.user), minutes_ago=10)
    assert list_registrations(visitor=person) == [newer, middle, older]


def test_a_cancellation_moves_the_registration_to_the_top(person):
    cancelled_later = changed(RegistrationFactory(user=person.user), minutes_ago=30)
    other = changed(RegistrationFactory(user=person.user), minutes_ago=10)
    actions.call(
        "cancel_registration", visitor=person, channel="api", event_id=cancelled_later.event.public_id
    )
    assert [r.pk for r in list_registrations(visitor=person)] == [cancelled_later.pk, other.pk]


@pytest.mark.parametrize(
    ("include_cancelled", "statuses"),
    [
        pytest.param(True, [CONFIRMED, CANCELLED], id="all-by-default"),
        pytest.param(False, [CONFIRMED], id="confirmed-only"),
    ],
)
def test_cancelled_registrations_can_be_left_out(person, include_cancelled, statuses):
    changed(RegistrationFactory(user=person.user), minutes_ago=20)
    changed(RegistrationFactory(user=person.user, status=CANCELLED), minutes_ago=30)
    listed = list_registrations(visitor=person, include_cancelled=include_cancelled)
    assert [r.status for r in listed] == statuses


@pytest.mark.parametrize(
    "traits",
    [
        pytest.param({"past": True}, id="started"),
        pytest.param({"cancelled": True}, id="cancelled"),
    ],
)
def test_registrations_for_started_or_cancelled_events_are_still_listed(person, traits):
    registration = RegistrationFactory(user=person.user, event=EventFactory(**traits))
    assert list_registrations(visitor=person) == [registration]


def test_one_statement_with_the_events_however_many(person, django_assert_num_queries):
    for _ in range(5):
        RegistrationFactory(user=person.user, event=EventFactory(capacity=4))
    with django_assert_num_queries(1):
        titles = [registration.event.title for registration in list_registrations(visitor=person)]
    assert len(titles) == 5
