"""The seat ledger: what a decision is taken on (confirmed and held seats, the visitor's registration
and entry, in one statement), how a seat is taken, and the queue that offers each freed seat to the
next person waiting. Every use case that can take or free a seat calls it inside its own transaction.

Two ways to read and take, one truth:

- Under the event's row lock (`seat_state`, after `public_event(..., lock=True)`): what every change
  but a plain registration decides on, and a registration whenever the queue has work or the counter
  cannot be trusted.
- Without it (`unlocked_seat_state`): the same statement as committed when it began, which a refusal
  may be taken on (it was true at that moment; nothing is written), then `take_seat`, one conditional
  UPDATE of the event's `seats_taken`, which takes the row lock only to take the seat. A full event
  therefore refuses a rush without making anyone wait for its row.

`Event.seats_taken` (confirmed plus held) is kept here: `take_seat` adds one, and every other change
recounts it from the rows (`recount_seats`) under the lock, in its own transaction. It is trusted only
when the same read found it equal to the rows' count (`SeatState.counter_right`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import DEFAULT_DB_ALIAS
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery

from core.statements import StatementCache
from core.visitors import Visitor

from .. import policies, tasks
from ..choices import (
    ACTIVE_WAITLIST,
    HOLDING_SEAT,
    EventStatus,
    NotificationKind,
    WaitlistStatus,
)
from ..errors import EventNotFound
from ..mail import outbox
from ..models import Event, EventQuerySet, Registration, WaitlistEntry, count_rows
from .common import bump_state_version


@dataclass(frozen=True)
class SeatState:
    """What a registration decides on, read in one statement.

    Under the lock, after, not in, the locking statement: under READ COMMITTED a `SELECT … FOR UPDATE`
    that waited for the lock still reads other rows as they were when it started, so counts taken in
    it could miss a seat taken by the transaction it waited for.
    """

    facts: policies.EventFacts
    anyone_waiting: bool  # an active entry (waiting or offered) on the event's list
    offer_due: bool  # an offer whose time is up: `process_queue` must end it
    joined_by_now: int  # active entries that joined at or before `now`: the places ahead of a newcomer
    registration_id: int | None  # the visitor's confirmed registration, else their newest one
    registration_active: bool
    entry_id: int | None  # the visitor's active waiting-list entry
    entry_offered: bool
    counter_right: bool  # `Event.seats_taken` equals confirmed plus held, in this same read


def anyone_waiting(event_ref: str) -> Exists:
    return Exists(WaitlistEntry.objects.filter(event=OuterRef(event_ref), status__in=ACTIVE_WAITLIST))


def settled_seat_state(event: Event, visitor: Visitor, *, now: datetime) -> SeatState:
    """The seat state a person's decision is taken on, under the event's row lock, after the queue has
    done what was due.

    Expired offers end, and free seats go out, before the decision; the state is read again only if
    that changed something.
    """
    seats = seat_state(event, visitor, now=now)
    if seats.anyone_waiting and (process_queue(event, now=now, known=seats) or seats.offer_due):
        seats = seat_state(event, visitor, now=now)
    return seats


STATE_ANNOTATIONS = (
    *("confirmed_count", "held_count", "anyone_waiting", "offer_due", "joined_by_now"),
    *("active_id", "newest_id", "entry_id", "entry_status"),
)
STATE_FIELDS = (*STATE_ANNOTATIONS, "seats_taken")


def _with_seat_state(events: EventQuerySet, user_id: int, now: datetime) -> EventQuerySet:
    mine = Registration.objects.filter(event=OuterRef("pk"), user_id=user_id).order_by("-updated_at", "-id")
    entry = WaitlistEntry.objects.filter(event=OuterRef("pk"), user_id=user_id, status__in=ACTIVE_WAITLIST)
    return events.with_seats().annotate(
        anyone_waiting=anyone_waiting("pk"),
        offer_due=Exists(
            WaitlistEntry.objects.filter(
                event=OuterRef("pk"), status=WaitlistStatus.OFFERED, expires_at__lte=now
            )
        ),
        joined_by_now=count_rows(
            WaitlistEntry.objects.filter(event=OuterRef("pk"), status__in=ACTIVE_WAITLIST, joined_at__lte=now)
        ),
        active_id=Subquery(mine.filter(status__in=HOLDING_SEAT).values("pk")[:1]),
        newest_id=Subquery(mine.values("pk")[:1]),
        entry_id=Subquery(entry.values("pk")[:1]),
        entry_status=Subquery(entry.values("status")[:1]),
    )


def seat_state(event: Event, visitor: Visitor, *, now: datetime) -> SeatState:
    """The seat state under the event's row lock (taken by the caller)."""
    events = Event.objects.filter(pk=event.pk)
    row = _with_seat_state(events, _user_id(visitor), now).values(*STATE_FIELDS).get()
    return _seat_state(event, row)


EVENT_FIELDS = tuple(field.attname for field in Event._meta.concrete_fields)


def _unlocked_statement(shape: Hashable, values: Mapping[str, Any]) -> QuerySet:
    events = Event.objects.public().filter(public_id=values["event_id"])
    state = _with_seat_state(events, values["user_id"], values["now"])
    return state.values_list(*EVENT_FIELDS, *STATE_ANNOTATIONS)[:1]  # seats_taken is a field


#: Compiled once per process (core/statements.py): building and compiling this statement of nine
#: subqueries in the ORM cost more than running it, and a rush is mostly this statement (the row
#: "rush attempts/s ÷ API search throughput", bench/README.md, "Stock pieces").
UNLOCKED_STATE = StatementCache(_unlocked_statement)


def unlocked_seat_state(event_id: str, visitor: Visitor, *, now: datetime) -> tuple[Event, SeatState]:
    """The public event `event_id` and the signed-in visitor's seat state in one statement, without
    its row lock: the rows as committed when the statement began, each count consistent with the
    others."""
    rows = UNLOCKED_STATE.rows("seats", {"event_id": event_id, "user_id": _user_id(visitor), "now": now})
    if not rows:
        raise EventNotFound()
    row = rows[0]
    event = Event.from_db(DEFAULT_DB_ALIAS, EVENT_FIELDS, row[: len(EVENT_FIELDS)])
    return event, _seat_state(event, row._asdict())


def _user_id(visitor: Visitor) -> int:
    assert visitor.user is not None, "the seat state is a signed-in visitor's"
    return visitor.user.pk


def _seat_state(event: Event, row: Mapping[str, Any]) -> SeatState:
    return SeatState(
        facts=locked_facts(event, row),
        anyone_waiting=row["anyone_waiting"],
        offer_due=row["offer_due"],
        joined_by_now=row["joined_by_now"],
        registration_id=row["active_id"] or row["newest_id"],
        registration_active=row["active_id"] is not None,
        entry_id=row["entry_id"],
        entry_offered=row["entry_status"] == WaitlistStatus.OFFERED,
        counter_right=row["seats_taken"] == row["confirmed_count"] + row["held_count"],
    )


def take_seat(event: Event, *, now: datetime) -> bool:
    """Take one seat of `event` for a registration about to be confirmed in this transaction: one
    conditional UPDATE of `seats_taken`, true if a seat was free (and the event open).

    The UPDATE takes the event's row lock; one that waited for it reads the row again as the other
    transaction left it (PostgreSQL rechecks the condition on the newest version), so two takers of
    the last seat cannot both have it. Call it only on a counter found right, with nobody waiting.
    """
    open_seat = Q(capacity__isnull=True) | Q(seats_taken__lt=F("capacity"))
    taken = Event.objects.filter(
        open_seat, pk=event.pk, status=EventStatus.PUBLISHED, starts_at__gt=now
    ).update(seats_taken=F("seats_taken") + 1)
    return taken == 1


def recount_seats(events: EventQuerySet) -> int:
    """Set each event's `seats_taken` to its confirmed plus held seats, counted now from the rows (the
    definition of `with_seats`): after every change that takes or frees a seat but `take_seat`.

    The caller holds the events' row locks already: an UPDATE that had to wait for one would count
    the rows as they were when it began, without the seat taken by the transaction it waited for.
    """
    return events.with_seats().update(seats_taken=F("confirmed_count") + F("held_count"))


def recount_event(event: Event) -> None:
    recount_seats(Event.objects.filter(pk=event.pk))


def seats_changed(event: Event, *, now: datetime, anyone_waiting: bool | None = None) -> list[WaitlistEntry]:
    """After a change that freed (or may have freed) a seat, under the event's row lock: the queue
    offers what is free to the people waiting (`anyone_waiting=False`: nobody is, as read under the
    lock), then `seats_taken` is recounted. Returns the new offers."""
    offers = process_queue(event, now=now, recount=False) if anyone_waiting is not False else []
    recount_event(event)
    return offers


def registration_of(seats: SeatState, event: Event) -> Registration:
    assert seats.registration_id is not None
    registration = Registration.objects.get(pk=seats.registration_id)
    registration.event = event
    return registration


def active_entry(visitor: Visitor, event: Event) -> WaitlistEntry | None:
    return WaitlistEntry.objects.filter(user=visitor.user, event=event, status__in=ACTIVE_WAITLIST).first()


SEAT_COUNTS = ("confirmed_count", "held_count")  # annotated by EventQuerySet.with_seats


def locked_facts(event: Event, counted: Mapping[str, Any] | None = None) -> policies.EventFacts:
    """The event's facts with its seats counted now, under its row lock (taken by the caller), by
    `with_seats` (the one definition of a taken seat); `counted` when the caller has read them."""
    if event.capacity is None:
        return policies.EventFacts.of(event)
    if counted is None:
        counted = Event.objects.filter(pk=event.pk).with_seats().values(*SEAT_COUNTS).get()
    return policies.EventFacts.of(event, confirmed=counted["confirmed_count"], held=counted["held_count"])


def end_entry(entry: WaitlistEntry, status: WaitlistStatus, *, now: datetime) -> None:
    entry.status = status
    entry.ended_at = now
    entry.save(update_fields=["status", "ended_at"])


def process_queue(
    event: Event, *, now: datetime, known: SeatState | None = None, recount: bool = True
) -> list[WaitlistEntry]:
    """Under the event's row lock: end its expired offers (telling each person), then offer each
    free seat to the next person waiting, in the order they joined. Returns the new offers.

    Runs inside the transaction of every change that can free a seat (a cancellation, a declined or
    expired offer, a capacity raise, a re-publication), so a freed seat is held for the next person
    before anyone else can see it free. `known` is the seat state the caller read under the same lock
    at the same `now`: what it says is not read again. An offer made or ended recounts `seats_taken`
    unless the caller will (`recount=False`).
    """
    if known is None:
        if not WaitlistEntry.objects.filter(event=event, status__in=ACTIVE_WAITLIST).exists():
            return []  # nobody waits (the common case): one query
    elif not known.anyone_waiting:
        return []
    due = known is None or known.offer_due
    expired = WaitlistEntry.objects.select_related("user").filter(
        event=event, status=WaitlistStatus.OFFERED, expires_at__lte=now
    )
    ended = 0
    for entry in expired if due else expired.none():
        ended += 1
        end_entry(entry, WaitlistStatus.EXPIRED, now=now)
        bump_state_version(visitor=Visitor(user=entry.user))
        outbox.notify(
            NotificationKind.OFFER_EXPIRED,
            user=entry.user,
            event=event,
            cause=f"entry-{entry.pk}",
            entry=entry,
        )
    facts = known.facts if known is not None and not due else locked_facts(event)
    if not policies.may_offer(facts, now=now):
        if ended and recount:
            recount_event(event)
        return []
    waiting = WaitlistEntry.objects.select_related("user").filter(event=event, status=WaitlistStatus.WAITING)
    free = facts.seats_left
    offers = list(waiting.order_by("joined_at", "id")[:free] if free is not None else waiting)
    expires_at = min(now + timedelta(hours=event.offer_hours), event.starts_at)
    for entry in offers:
        entry.status = WaitlistStatus.OFFERED
        entry.offered_at = now
        entry.expires_at = expires_at
        entry.save(update_fields=["status", "offered_at", "expires_at"])
        bump_state_version(visitor=Visitor(user=entry.user))
        outbox.notify(
            NotificationKind.WAITLIST_OFFER,
            user=entry.user,
            event=event,
            cause=f"entry-{entry.pk}",
            entry=entry,
        )
    if offers:
        tasks.process_waitlist.using(run_after=expires_at).enqueue(event.pk)
    if (offers or ended) and recount:
        recount_event(event)
    return offers
