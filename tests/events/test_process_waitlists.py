"""Offers: a freed seat goes to the first person waiting, held until it expires, claimed by registering.

Each way a seat frees (a cancellation, a declined or expired offer, a capacity raise) is one test; time
moves forward by giving `now`, as the sweep task does with the clock.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from core.visitors import Visitor
from events import actions, selectors, tasks
from events.choices import NotificationKind, RegistrationStatus, WaitlistStatus
from events.errors import EventFull
from events.models import Activity, Event, Notification, Registration, WaitlistEntry
from events.services import registrations, waitlist
from tests.factories import EventFactory, UserFactory
from tests.tasks import run_tasks

from .conftest import version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def call(use_case, visitor: Visitor, event: Event):
    return actions.call(use_case.__name__, visitor=visitor, channel="api", event_id=event.public_id)


@pytest.fixture
def queue():
    """A 2-seat event, full, with three people waiting in order."""
    event = EventFactory(capacity=2)
    holders = [Visitor(user=UserFactory()) for _ in range(2)]
    for holder in holders:
        call(registrations.register_event, holder, event)
    waiting = [Visitor(user=UserFactory()) for _ in range(3)]
    for visitor in waiting:
        call(waitlist.join_waitlist, visitor, event)
    return event, holders, waiting


def status_of(visitor: Visitor) -> str:
    return WaitlistEntry.objects.filter(user=visitor.user).latest("joined_at", "id").status


def test_a_cancellation_offers_the_seat_to_the_first_person_waiting(queue):
    event, holders, waiting = queue
    before = version(waiting[0])
    call(registrations.cancel_registration, holders[0], event)
    entry = WaitlistEntry.objects.get(user=waiting[0].user)
    assert entry.status == WaitlistStatus.OFFERED
    assert entry.expires_at == entry.offered_at + timedelta(hours=24)
    assert [status_of(v) for v in waiting[1:]] == [WaitlistStatus.WAITING] * 2
    assert version(waiting[0]) == before + 1  # their page and tools follow the offer
    run_tasks()
    [offer] = Notification.objects.filter(kind=NotificationKind.WAITLIST_OFFER)
    assert offer.user == waiting[0].user


def test_a_held_seat_is_not_free_for_anyone_else(queue):
    event, holders, waiting = queue
    call(registrations.cancel_registration, holders[0], event)
    newcomer = Visitor(user=UserFactory())
    with pytest.raises(EventFull):
        call(registrations.register_event, newcomer, event)
    with pytest.raises(EventFull):
        call(registrations.register_event, waiting[1], event)  # waiting, but not the one offered
    details = selectors.get_event_details(visitor=newcomer, event_id=event.public_id)
    assert (details.event.seats_left, details.event.is_full) == (0, True)


def test_the_holder_claims_the_seat_by_registering(queue):
    event, holders, waiting = queue
    call(registrations.cancel_registration, holders[0], event)
    result = call(registrations.register_event, waiting[0], event)
    assert result.registration.status == RegistrationStatus.CONFIRMED
    assert status_of(waiting[0]) == WaitlistStatus.CLAIMED
    assert Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count() == 2
    # The others move up: the second person is now first.
    place = selectors.waitlist_place(WaitlistEntry.objects.get(user=waiting[1].user))
    assert place.position == 1


def test_declining_passes_the_seat_to_the_next_person_at_once(queue):
    event, holders, waiting = queue
    call(registrations.cancel_registration, holders[0], event)
    result = call(waitlist.leave_waitlist, waiting[0], event)
    assert (result.was_waiting, result.declined_offer) == (True, True)
    assert status_of(waiting[0]) == WaitlistStatus.DECLINED
    assert status_of(waiting[1]) == WaitlistStatus.OFFERED


def test_an_expired_offer_ends_the_entry_and_goes_to_the_next_person(queue):
    event, holders, waiting = queue
    call(registrations.cancel_registration, holders[0], event)
    expires_at = WaitlistEntry.objects.get(user=waiting[0].user).expires_at
    assert tasks.offer_due_seats(now=expires_at - timedelta(seconds=1)) == 0
    assert tasks.offer_due_seats(now=expires_at) == 1
    assert status_of(waiting[0]) == WaitlistStatus.EXPIRED
    assert status_of(waiting[1]) == WaitlistStatus.OFFERED
    run_tasks()
    kinds = sorted(Notification.objects.filter(user=waiting[0].user).values_list("kind", flat=True))
    assert kinds == [NotificationKind.OFFER_EXPIRED, NotificationKind.WAITLIST_OFFER]
    # They may join again, at the back.
    assert call(waitlist.join_waitlist, waiting[0], event).place.position == 3


def test_each_offer_queues_its_own_expiry_task(queue):
    from django_tasks_db.models import DBTaskResult

    event, holders, _ = queue
    call(registrations.cancel_registration, holders[0], event)
    expiry = DBTaskResult.objects.get(task_path="events.tasks.process_waitlist")
    assert expiry.args_kwargs["args"] == [event.pk]
    assert expiry.run_after == WaitlistEntry.objects.get(status=WaitlistStatus.OFFERED).expires_at


def test_raising_capacity_offers_every_new_seat_in_order(queue):
    event, _, waiting = queue
    Event.objects.filter(pk=event.pk).update(capacity=4)
    assert tasks.offer_due_seats(event_pks=[event.pk]) == 2
    assert [status_of(v) for v in waiting] == [WaitlistStatus.OFFERED] * 2 + [WaitlistStatus.WAITING]


def test_an_offer_never_outlives_the_start(queue):
    event, holders, waiting = queue
    Event.objects.filter(pk=event.pk).update(starts_at=timezone.now() + timedelta(hours=5))
    call(registrations.cancel_registration, holders[0], event)
    entry = WaitlistEntry.objects.get(user=waiting[0].user)
    assert entry.expires_at == Event.objects.get(pk=event.pk).starts_at


def test_the_offer_duration_is_the_events(queue):
    event, holders, waiting = queue
    Event.objects.filter(pk=event.pk).update(offer_hours=3)
    call(registrations.cancel_registration, holders[0], event)
    entry = WaitlistEntry.objects.get(user=waiting[0].user)
    assert entry.expires_at - entry.offered_at == timedelta(hours=3)


def test_close_to_the_start_a_freed_seat_is_open_to_anyone(queue):
    event, holders, waiting = queue
    Event.objects.filter(pk=event.pk).update(starts_at=timezone.now() + timedelta(hours=1))
    call(registrations.cancel_registration, holders[0], event)
    assert [status_of(v) for v in waiting] == [WaitlistStatus.WAITING] * 3
    newcomer = Visitor(user=UserFactory())
    assert call(registrations.register_event, newcomer, event).registration.is_active
    # A waiting person who registers for a free seat leaves the list too.
    call(registrations.cancel_registration, newcomer, event)
    call(registrations.register_event, waiting[2], event)
    assert status_of(waiting[2]) == WaitlistStatus.CLAIMED


def test_cancelling_the_event_closes_the_list_and_tells_everyone(queue, organiser):
    event, holders, waiting = queue
    call(registrations.cancel_registration, holders[0], event)  # waiting[0] now holds an offer
    run_tasks()
    mail.outbox.clear()
    result = actions.call("cancel_event", visitor=organiser, channel="admin", event_id=event.public_id)
    assert (result.cancelled_registrations, result.closed_waitlist_entries) == (1, 3)
    assert {status_of(v) for v in waiting} == {WaitlistStatus.CLOSED}
    run_tasks()
    assert sorted(m.to[0] for m in mail.outbox) == sorted(
        [holders[1].user.email, *(v.user.email for v in waiting)]
    )
    assert all(event.title in m.subject for m in mail.outbox)


def test_waiting_people_of_an_unlimited_event_are_all_offered(queue):
    event, _, waiting = queue
    Event.objects.filter(pk=event.pk).update(capacity=None)
    assert tasks.offer_due_seats(event_pks=[event.pk]) == 3
    assert {status_of(v) for v in waiting} == {WaitlistStatus.OFFERED}


def test_the_offer_email_says_until_when(queue, settings):
    event, holders, waiting = queue
    call(registrations.cancel_registration, holders[0], event)
    mail.outbox.clear()
    run_tasks()
    [offer] = [m for m in mail.outbox if m.to == [waiting[0].user.email]]
    assert event.title in offer.subject
    assert f"/events/{event.public_id}/" in offer.body


def test_the_sweep_performs_its_work_as_the_site_with_an_activity_row_per_event(queue):
    """The worker's sweep is the declared system actor: each event it serves is one `offer_free_seats`
    row, channel `system`, its task as the client; an event with nothing to do costs no row."""
    event, holders, waiting = queue
    quiet = EventFactory(capacity=1)
    call(registrations.register_event, Visitor(user=UserFactory()), quiet)
    call(waitlist.join_waitlist, Visitor(user=UserFactory()), quiet)  # waits, but nothing is free
    call(registrations.cancel_registration, holders[0], event)
    expires_at = WaitlistEntry.objects.get(user=waiting[0].user).expires_at
    since = Activity.objects.order_by("-pk").values_list("pk", flat=True).first()
    assert tasks.offer_due_seats(now=expires_at, client="sweep_waitlists") == 1
    [row] = Activity.objects.filter(pk__gt=since)
    assert (row.action, row.mode, row.outcome, row.client) == (
        "offer_free_seats",
        "system",
        "OK",
        "sweep_waitlists",
    )
    assert (row.event_id, row.user_id) == (event.pk, None)
    assert tasks.offer_due_seats(now=expires_at) == 0  # nothing due any more: no row
    assert Activity.objects.filter(pk__gt=since).count() == 1


def test_the_expiry_task_performs_the_row_for_its_event(queue):
    event, holders, waiting = queue
    call(registrations.cancel_registration, holders[0], event)
    WaitlistEntry.objects.filter(status=WaitlistStatus.OFFERED).update(expires_at=timezone.now())
    tasks.process_waitlist.call(event.pk)
    assert status_of(waiting[0]) == WaitlistStatus.EXPIRED
    row = Activity.objects.filter(action="offer_free_seats").get()
    assert (row.mode, row.client, row.event_id) == ("system", "process_waitlist", event.pk)
