"""The waiting list under a race, on PostgreSQL: what the concurrency test asserts and `make bench`
reports (figure "waitlist").

An event of `capacity` seats is full; `waiting` people join its waiting list in order. Then, released
together on their own database connections: `cancellations` registrants cancel, every waiting person
claims a seat as soon as one is offered to them, `outsiders` try to register, and an expiry thread moves
time forward (offers expire and go to the next people) while a monitor keeps counting seats.

Needs a configured Django (the caller's settings) and a database where the rows can be committed.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection, connections
from django.utils import timezone

from core.errors import DomainError
from core.visitors import Visitor
from events import actions, tasks
from events.choices import EventStatus, Level, Location, RegistrationStatus, WaitlistStatus
from events.errors import EventFull
from events.models import Event, Registration, WaitlistEntry
from events.services.ledger import recount_seats

THREADS_PER_ROLE = 8
COUNT_SEATS = """
    SELECT
      (SELECT count(*) FROM events_registration WHERE event_id = %(event)s AND status = 'confirmed'),
      (SELECT count(*) FROM events_waitlistentry WHERE event_id = %(event)s AND status = 'offered')
"""


def run(
    *,
    capacity: int = 50,
    waiting: int = 100,
    cancellations: int = 30,
    outsiders: int = 20,
    expiry_rounds: int = 2,
) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:8]
    event, holders, queue, others = _setup(tag, capacity=capacity, waiting=waiting, outsiders=outsiders)
    queue_order = [user.pk for user in queue]
    errors: list[str] = []
    outsider_answers: list[str] = []
    claims: list[int] = []
    seen: list[int] = []
    done = threading.Event()
    # Work is shared among a few threads, each with its own database connection (a server's worth).
    cancelling = _slices(holders[:cancellations], THREADS_PER_ROLE)
    claiming = _slices(queue, THREADS_PER_ROLE)
    trying = _slices(others, THREADS_PER_ROLE)
    start = threading.Barrier(len(cancelling) + len(claiming) + len(trying) + 2)

    def guarded(work):
        def body(*args):
            try:
                start.wait(timeout=60)
                work(*args)
            except Exception as error:  # a deadlock or any database error is a failure of the figure
                errors.append(f"{type(error).__name__}: {error}")
            finally:
                connections.close_all()

        return body

    def cancel(users):
        for user in users:
            actions.call(
                "cancel_registration", visitor=Visitor(user=user), channel="api", event_id=event.public_id
            )
            time.sleep(0.01)

    def claim(users):
        """People who register as soon as a seat is held for them, until their entry ends or the race
        is over."""
        left = {user.pk: user for user in users}
        while left and not done.is_set():
            statuses = dict(
                WaitlistEntry.objects.filter(user__in=list(left), event=event)
                .order_by("id")
                .values_list("user_id", "status")
            )
            for pk, status in statuses.items():
                if status == WaitlistStatus.EXPIRED:
                    del left[pk]
                elif status == WaitlistStatus.OFFERED:
                    try:
                        actions.call(
                            "register_event",
                            visitor=Visitor(user=left[pk]),
                            channel="api",
                            event_id=event.public_id,
                        )
                        claims.append(pk)
                        del left[pk]
                    except EventFull:  # the offer expired just before: the entry will say so
                        pass
            time.sleep(0.02)

    def outsider(users):
        for user in users:
            try:
                actions.call(
                    "register_event", visitor=Visitor(user=user), channel="api", event_id=event.public_id
                )
                outsider_answers.append("REGISTERED")
            except DomainError as refusal:
                outsider_answers.append(refusal.reason)
            time.sleep(0.01)

    def expire():
        for round_ in range(1, expiry_rounds + 1):
            time.sleep(0.1)
            tasks.offer_due_seats(event_pks=[event.pk], now=timezone.now() + timedelta(hours=25 * round_))

    def monitor():
        with connection.cursor() as cursor:
            while not done.is_set():
                cursor.execute(COUNT_SEATS, {"event": event.pk})
                confirmed, held = cursor.fetchone()
                seen.append(confirmed + held)
                time.sleep(0.002)

    threads = [threading.Thread(target=guarded(cancel), args=(part,)) for part in cancelling]
    threads += [threading.Thread(target=guarded(claim), args=(part,)) for part in claiming]
    threads += [threading.Thread(target=guarded(outsider), args=(part,)) for part in trying]
    threads.append(threading.Thread(target=guarded(expire)))
    watcher = threading.Thread(target=guarded(monitor))
    began = time.monotonic()
    for thread in [*threads, watcher]:
        thread.start()
    # The race is over when every cancellation and expiry is in and every held seat has been claimed.
    _wait_for_quiet(event, holders[:cancellations], threads, timeout=120)
    done.set()
    for thread in [*threads, watcher]:
        thread.join(timeout=60)
    elapsed = time.monotonic() - began
    return _verdict(
        event,
        queue_order=queue_order,
        capacity=capacity,
        cancellations=cancellations,
        outsiders=len(others),
        outsider_answers=outsider_answers,
        claims=len(claims),
        max_seen=max(seen, default=0),
        errors=errors,
        elapsed=elapsed,
        stuck=[thread.name for thread in threads if thread.is_alive()],
    )


def _slices(items: list, n: int) -> list[list]:
    return [part for part in (items[i::n] for i in range(n)) if part]


def _wait_for_quiet(
    event: Event, cancelling: list, threads: list[threading.Thread], *, timeout: float
) -> None:
    """Until the cancellations are in, the expiry rounds are done and no offer waits to be claimed."""
    deadline = time.monotonic() + timeout
    expiry = threads[-1]
    while time.monotonic() < deadline:
        cancelled = Registration.objects.filter(
            event=event, user__in=cancelling, status=RegistrationStatus.CANCELLED
        ).count()
        pending = WaitlistEntry.objects.filter(event=event, status=WaitlistStatus.OFFERED).count()
        if cancelled == len(cancelling) and not expiry.is_alive() and pending == 0:
            return
        time.sleep(0.02)


def _setup(tag: str, *, capacity: int, waiting: int, outsiders: int):
    now = timezone.now()
    event = Event.objects.create(
        public_id=f"evt-race-{tag}",
        title="Waiting-list race",
        summary="A full event whose seats free while people claim them.",
        starts_at=now + timedelta(days=30),
        ends_at=now + timedelta(days=30, hours=2),
        location=Location.TAIPEI,
        level=Level.BEGINNER,
        capacity=capacity,
        status=EventStatus.PUBLISHED,
    )
    password = make_password(None)
    User = get_user_model()
    users = User.objects.bulk_create(
        [
            User(username=f"race-{tag}-{n}", email=f"race-{tag}-{n}@example.com", password=password)
            for n in range(capacity + waiting + outsiders)
        ]
    )
    holders, queue, others = (
        users[:capacity],
        users[capacity : capacity + waiting],
        users[capacity + waiting :],
    )
    Registration.objects.bulk_create([Registration(user=user, event=event) for user in holders])
    recount_seats(Event.objects.filter(pk=event.pk))  # a bulk load: the seat counter as the site keeps it
    for user in queue:  # one at a time: the queue's order is the order of joining
        actions.call("join_waitlist", visitor=Visitor(user=user), channel="api", event_id=event.public_id)
    return event, holders, queue, others


def _verdict(event: Event, *, queue_order: list[int], capacity: int, cancellations: int, **seen: Any) -> dict:
    entries = {entry.user_id: entry for entry in WaitlistEntry.objects.filter(event=event)}
    offered = [pk for pk in queue_order if entries[pk].offered_at is not None]
    # Strict queue order: the people ever offered a seat are exactly the first ones in line.
    in_order = offered == queue_order[: len(offered)]
    expired = sum(entry.status == WaitlistStatus.EXPIRED for entry in entries.values())
    held = sum(entry.status == WaitlistStatus.OFFERED for entry in entries.values())
    claimed = sum(entry.status == WaitlistStatus.CLAIMED for entry in entries.values())
    confirmed = Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count()
    seats_taken = Event.objects.values_list("seats_taken", flat=True).get(pk=event.pk)
    result = {
        "capacity": capacity,
        "cancellations": cancellations,
        "offers": len(offered),
        "claimed": claimed,
        "expired": expired,
        "held": held,
        "confirmed": confirmed,
        "seats_taken": seats_taken,  # the event's seat counter: equal to confirmed plus held
        "max_confirmed_plus_held": seen["max_seen"],
        "oversold": max(0, seen["max_seen"] - capacity, confirmed + held - capacity),
        "in_queue_order": in_order,
        "outsiders": seen["outsiders"],
        "outsiders_refused_full": seen["outsider_answers"].count("EVENT_FULL"),
        "errors": seen["errors"][:5],
        "stuck_threads": seen["stuck"],
        "seconds": round(seen["elapsed"], 2),
        "offers_per_s": round(len(offered) / seen["elapsed"], 1) if seen["elapsed"] else 0,
    }
    result["ok"] = (
        result["oversold"] == 0
        and confirmed + held == capacity  # every freed seat is taken or held: none lost
        and seats_taken == confirmed + held
        and len(offered) == cancellations + expired  # each freed seat offered once, again after expiry
        and claimed == seen["claims"]
        and in_order
        and result["outsiders_refused_full"] == seen["outsiders"]
        and not seen["errors"]
        and not seen["stuck"]
    )
    return result
