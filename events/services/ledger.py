"""The seat ledger, under the event's row lock: what a decision is taken on (confirmed and held seats,
the visitor's registration and entry, in one statement after the lock), and the queue that offers each
freed seat to the next person waiting. Every use case that can take or free a seat calls it inside its
own transaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Exists, OuterRef, Subquery

from core.visitors import Visitor

from .. import policies, tasks
from ..choices import ACTIVE_WAITLIST, NotificationKind, RegistrationStatus, WaitlistStatus
from ..mail import outbox
from ..models import Event, Registration, WaitlistEntry, count_rows
from .common import bump_state_version


@dataclass(frozen=True)
class SeatState:
    """What a registration decides on, read in one statement after the event's row lock is taken.

    After, not in, the locking statement: under READ COMMITTED a `SELECT … FOR UPDATE` that waited
    for the lock still reads other rows as they were when it started, so counts taken in it could
    miss a seat taken by the transaction it waited for.
    """

    facts: policies.EventFacts
    anyone_waiting: bool  # an active entry (waiting or offered) on the event's list
    offer_due: bool  # an offer whose time is up: `process_queue` must end it
    joined_by_now: int  # active entries that joined at or before `now`: the places ahead of a newcomer
    registration_id: int | None  # the visitor's confirmed registration, else their newest one
    registration_active: bool
    entry_id: int | None  # the visitor's active waiting-list entry
    entry_offered: bool


def anyone_waiting(event_ref: str) -> Exists:
    return Exists(WaitlistEntry.objects.filter(event=OuterRef(event_ref), status__in=ACTIVE_WAITLIST))


def settled_seat_state(event: Event, visitor: Visitor, *, now: datetime) -> SeatState:
    """The seat state a person's decision is taken on, after the queue has done what was due.

    Expired offers end, and free seats go out, before the decision; the state is read again only if
    that changed something.
    """
    seats = seat_state(event, visitor, now=now)
    if seats.anyone_waiting and (process_queue(event, now=now, known=seats) or seats.offer_due):
        seats = seat_state(event, visitor, now=now)
    return seats


def seat_state(event: Event, visitor: Visitor, *, now: datetime) -> SeatState:
    mine = Registration.objects.filter(event=OuterRef("pk"), user=visitor.user).order_by("-updated_at", "-id")
    entry = WaitlistEntry.objects.filter(event=OuterRef("pk"), user=visitor.user, status__in=ACTIVE_WAITLIST)
    row = (
        Event.objects.filter(pk=event.pk)
        .with_seats()
        .annotate(
            anyone_waiting=anyone_waiting("pk"),
            offer_due=Exists(
                WaitlistEntry.objects.filter(
                    event=OuterRef("pk"), status=WaitlistStatus.OFFERED, expires_at__lte=now
                )
            ),
            joined_by_now=count_rows(
                WaitlistEntry.objects.filter(
                    event=OuterRef("pk"), status__in=ACTIVE_WAITLIST, joined_at__lte=now
                )
            ),
            active_id=Subquery(mine.filter(status=RegistrationStatus.CONFIRMED).values("pk")[:1]),
            newest_id=Subquery(mine.values("pk")[:1]),
            entry_id=Subquery(entry.values("pk")[:1]),
            entry_status=Subquery(entry.values("status")[:1]),
        )
        .values(
            "confirmed_count",
            "held_count",
            "anyone_waiting",
            "offer_due",
            "joined_by_now",
            "active_id",
            "newest_id",
            "entry_id",
            "entry_status",
        )
        .get()
    )
    return SeatState(
        facts=locked_facts(event, row),
        anyone_waiting=row["anyone_waiting"],
        offer_due=row["offer_due"],
        joined_by_now=row["joined_by_now"],
        registration_id=row["active_id"] or row["newest_id"],
        registration_active=row["active_id"] is not None,
        entry_id=row["entry_id"],
        entry_offered=row["entry_status"] == WaitlistStatus.OFFERED,
    )


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


def process_queue(event: Event, *, now: datetime, known: SeatState | None = None) -> list[WaitlistEntry]:
    """Under the event's row lock: end its expired offers (telling each person), then offer each
    free seat to the next person waiting, in the order they joined. Returns the new offers.

    Runs inside the transaction of every change that can free a seat (a cancellation, a declined or
    expired offer, a capacity raise, a re-publication), so a freed seat is held for the next person
    before anyone else can see it free. `known` is the seat state the caller read under the same lock
    at the same `now`: what it says is not read again.
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
    for entry in expired if due else expired.none():
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
    return offers
