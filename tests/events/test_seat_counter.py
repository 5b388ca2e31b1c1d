"""`Event.seats_taken` equals the rows (confirmed plus held seats) after every kind of seat change, and
a registration never trusts it when it does not: it is what lets a seat be taken by one conditional
UPDATE and a full event refuse without its row lock (events/services/ledger.py).

On SQLite and PostgreSQL; the last test needs PostgreSQL's row locks."""

from __future__ import annotations

import threading
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.visitors import Visitor
from events import actions, tasks, tickets
from events.choices import RegistrationStatus, WaitlistStatus
from events.errors import EventFull
from events.models import Event, Registration, WaitlistEntry
from events.services import ledger, payments, registrations
from tests.factories import EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def call(name: str, visitor: Visitor, event: Event, **data):
    return actions.call(name, visitor=visitor, channel="api", event_id=event.public_id, **data)


def seats(event: Event) -> tuple[int, int]:
    """(the counter, the truth: confirmed plus held, counted from the rows)."""
    row = Event.objects.with_seats().get(pk=event.pk)
    return row.seats_taken, row.confirmed_count + row.held_count


def assert_counted(event: Event, expected: int) -> None:
    assert seats(event) == (expected, expected)


def people(n: int) -> list[Visitor]:
    return [Visitor(user=UserFactory()) for _ in range(n)]


def status_of(visitor: Visitor, event: Event) -> str:
    return WaitlistEntry.objects.filter(user=visitor.user, event=event).latest("joined_at", "id").status


def test_the_counter_equals_the_rows_after_every_kind_of_seat_change(organiser):
    event = EventFactory(capacity=2)
    first, second, third, fourth, fifth = people(5)
    assert_counted(event, 0)

    call("register_event", first, event)  # a free seat, taken without the lock
    assert_counted(event, 1)
    call("register_event", second, event)  # the last one
    assert_counted(event, 2)
    with pytest.raises(EventFull):
        call("register_event", third, event)
    assert_counted(event, 2)
    for visitor in (third, fourth, fifth):
        call("join_waitlist", visitor, event)
    assert_counted(event, 2)

    call("cancel_registration", first, event)  # the seat is held for the first person waiting
    assert status_of(third, event) == WaitlistStatus.OFFERED
    assert_counted(event, 2)
    call("leave_waitlist", third, event)  # declined: held for the next one
    assert status_of(fourth, event) == WaitlistStatus.OFFERED
    assert_counted(event, 2)
    later = timezone.now() + timedelta(hours=event.offer_hours + 1)
    tasks.offer_due_seats(event_pks=[event.pk], now=later)  # expired: held for the next one
    assert (status_of(fourth, event), status_of(fifth, event)) == (
        WaitlistStatus.EXPIRED,
        WaitlistStatus.OFFERED,
    )
    assert_counted(event, 2)
    call("register_event", fifth, event)  # the holder claims it (decided under the lock)
    assert status_of(fifth, event) == WaitlistStatus.CLAIMED
    assert_counted(event, 2)

    registration = Registration.objects.get(user=second.user, event=event)
    actions.call(
        "cancel_attendee_registration", visitor=organiser, channel="admin", registration_id=registration.pk
    )
    assert_counted(event, 1)  # nobody waits any more: the seat is free
    call("register_event", second, event)  # re-activated
    assert_counted(event, 2)

    event.capacity = 4  # the admin's form saves the whole row (its counter as read long ago)
    event.save()
    assert_counted(event, 2)
    call("register_event", third, event)
    assert_counted(event, 3)
    event.capacity = 1  # fewer seats than taken: the event is full, the counter is the rows'
    event.save()
    assert_counted(event, 3)
    with pytest.raises(EventFull):
        call("register_event", fourth, event)

    actions.call("unpublish_event", visitor=organiser, channel="admin", event_id=event.public_id)
    actions.call("publish_event", visitor=organiser, channel="admin", event_id=event.public_id)
    assert_counted(event, 3)
    actions.call("cancel_event", visitor=organiser, channel="admin", event_id=event.public_id)
    assert_counted(event, 0)


def test_a_capacity_raise_offers_the_new_seats_and_counts_them_held(organiser):
    event = EventFactory(capacity=1)
    holder, waiting = people(2)
    call("register_event", holder, event)
    call("join_waitlist", waiting, event)
    Event.objects.filter(pk=event.pk).update(capacity=2)
    actions.call("offer_free_seats", visitor=organiser, channel="admin", event_id=event.public_id)
    assert status_of(waiting, event) == WaitlistStatus.OFFERED
    assert_counted(event, 2)


def test_a_whole_row_save_does_not_write_back_a_counter_read_before_a_seat_was_taken():
    event = EventFactory(capacity=3)
    as_read = Event.objects.get(pk=event.pk)  # the admin's form reads the row ...
    call("register_event", people(1)[0], event)  # ... someone registers meanwhile ...
    as_read.title = "Renamed"
    as_read.save()  # ... and the form saves every field
    assert_counted(event, 1)
    assert Event.objects.get(pk=event.pk).title == "Renamed"


def test_a_counter_that_disagrees_with_the_rows_is_never_trusted():
    """Rows written some other way (a bulk load, a cascade): the rows decide, and the next registration
    under the lock puts the counter right."""
    event = EventFactory(capacity=3)
    holders = [UserFactory() for _ in range(2)]
    Registration.objects.bulk_create([Registration(user=user, event=event) for user in holders])
    assert seats(event) == (0, 2)
    first, second = people(2)
    call("register_event", first, event)  # the last seat, not the counter's three free ones
    assert_counted(event, 3)
    with pytest.raises(EventFull):
        call("register_event", second, event)

    Registration.objects.filter(user__in=holders).delete()  # as a deleted account's rows go
    assert seats(event) == (3, 1)
    call("register_event", second, event)  # free seats, although the counter says full
    assert_counted(event, 2)


def test_recount_seats_counts_rows_written_another_way():
    event = EventFactory(capacity=3)
    Registration.objects.bulk_create([Registration(user=UserFactory(), event=event)])
    WaitlistEntry.objects.bulk_create(
        [
            WaitlistEntry(
                user=UserFactory(), event=event, status=WaitlistStatus.OFFERED, expires_at=timezone.now()
            )
        ]
    )
    out = StringIO()
    call_command("recount_seats", stdout=out)
    assert_counted(event, 2)
    assert "events counted" in out.getvalue()


def test_a_full_event_refuses_in_one_statement_that_locks_nothing():
    event = EventFactory(capacity=1)
    holder, late = people(2)
    call("register_event", holder, event)
    with CaptureQueriesContext(connection) as captured, pytest.raises(EventFull):
        registrations.register_event(visitor=late, event_id=event.public_id)
    written = [
        query["sql"]
        for query in captured.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE", "ROLLBACK"))
    ]
    assert len(written) == 1 and "FOR UPDATE" not in written[0] and written[0].startswith("SELECT"), written


def test_a_race_lost_to_the_same_person_gives_the_seat_back():
    """The person's other call registered between the unlocked read and the take: the seat taken for
    this one is given back, and the call answers as already registered (decided under the lock)."""
    event = EventFactory(capacity=5)
    person, returning = people(2)
    call("register_event", returning, event)
    call("cancel_registration", returning, event)
    for visitor in (person, returning):  # a new registration (the INSERT), a re-activation
        now = timezone.now()
        _, stale = ledger.unlocked_seat_state(event.public_id, visitor, now=now)
        call("register_event", visitor, event)  # the other call, faster
        with transaction.atomic():
            start = payments.payment_start(event, tickets.types_of(event)[0], None, now=now, approval=False)
            assert (
                registrations._take_and_confirm(visitor, event, stale, now=now, answers={}, start=start)
                is None
            )
        again = registrations.register_event(visitor=visitor, event_id=event.public_id)
        assert again.already_registered
    assert Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count() == 2
    assert_counted(event, 2)


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_full_event_answers_while_its_row_is_locked_by_a_change_in_progress():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL's row locks; run with DATABASE_URL=postgres://…")
    event = EventFactory(capacity=1)
    holder, late, next_one = people(3)
    call("register_event", holder, event)
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        try:
            with transaction.atomic():
                Event.objects.select_for_update().get(pk=event.pk)
                locked.set()
                release.wait(timeout=60)
        finally:
            connections.close_all()

    holder_thread = threading.Thread(target=hold_the_lock)
    holder_thread.start()
    try:
        assert locked.wait(timeout=30)
        with transaction.atomic():
            with connection.cursor() as cursor:  # waiting for the lock would fail the test, not hang it
                cursor.execute("SET LOCAL lock_timeout = '5s'")
            with pytest.raises(EventFull):
                registrations.register_event(visitor=late, event_id=event.public_id)
    finally:
        release.set()
        holder_thread.join(timeout=60)
    call("cancel_registration", holder, event)
    call("register_event", next_one, event)
    assert_counted(event, 1)
