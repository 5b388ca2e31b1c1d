"""Write use cases (layer 2). Each runs in one transaction and is idempotent; its call's Activity row
is written by `events.actions.perform`, which every interface goes through.

Refusals are typed errors from `errors.py`; `stateVersion` rises exactly once per real change and
never on a no-op.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from core.errors import AuthRequired, PermissionDenied
from core.visitors import Visitor

from . import outbox, policies, tasks
from .choices import ACTIVE_WAITLIST, EventStatus, NotificationKind, RegistrationStatus, WaitlistStatus
from .errors import EventNotFound, RegistrationNotFound
from .models import Event, Registration, SavedEvent, VisitorState, WaitlistEntry, count_rows
from .selectors import WaitlistPlace, saved_owner, state_version, waitlist_place


@dataclass(frozen=True)
class SaveResult:
    event: Event
    already_saved: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "ALREADY_SAVED" if self.already_saved else "OK"


@dataclass(frozen=True)
class UnsaveResult:
    event: Event
    was_saved: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "OK" if self.was_saved else "NOT_SAVED"


@dataclass(frozen=True)
class _RegistrationChange:
    registration: Registration

    @property
    def event(self) -> Event:
        return self.registration.event


@dataclass(frozen=True)
class RegistrationResult(_RegistrationChange):
    created: bool
    already_registered: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "ALREADY_REGISTERED" if self.already_registered else "OK"


@dataclass(frozen=True)
class CancelResult(_RegistrationChange):
    already_cancelled: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "ALREADY_CANCELLED" if self.already_cancelled else "OK"


def bump_state_version(*, visitor: Visitor) -> int:
    """Raise the visitor's stateVersion by one; call only inside the transaction of a real change.

    One atomic upsert (PostgreSQL and SQLite ≥ 3.35 both speak it), so concurrent changes by the same
    visitor each count once without a separate lock and read.
    """
    table = connection.ops.quote_name(VisitorState._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (visitor_key, version) VALUES (%s, 1) "
            f"ON CONFLICT (visitor_key) DO UPDATE SET version = {table}.version + 1 RETURNING version",
            [visitor.key],
        )
        return cursor.fetchone()[0]


@transaction.atomic
def save_event(*, visitor: Visitor, event_id: str) -> SaveResult:
    """Save a published event for the visitor (account or session token). Saving twice is a no-op."""
    event = _public_event(event_id)
    policies.may_save(policies.EventFacts.of(event), _facts(visitor)).enforce()
    owner = saved_owner(visitor) or {}
    try:
        with transaction.atomic():
            SavedEvent.objects.create(event=event, **owner)
    except IntegrityError:
        # The unique constraint answers "already saved" (also when a concurrent save won the race).
        return SaveResult(event=event, already_saved=True, state_version=state_version(visitor=visitor))
    return SaveResult(event=event, already_saved=False, state_version=bump_state_version(visitor=visitor))


@transaction.atomic
def unsave_event(*, visitor: Visitor, event_id: str) -> UnsaveResult:
    """Remove a save. Removing what is not saved changes nothing and is not an error."""
    event = _public_event(event_id)
    owner = saved_owner(visitor)
    deleted = SavedEvent.objects.filter(event=event, **owner).delete()[0] if owner else 0
    version = bump_state_version(visitor=visitor) if deleted else state_version(visitor=visitor)
    return UnsaveResult(event=event, was_saved=bool(deleted), state_version=version)


@transaction.atomic
def register_event(*, visitor: Visitor, event_id: str) -> RegistrationResult:
    """Register the signed-in visitor, or return the registration they already have.

    Locks the event row before counting seats, so concurrent calls cannot oversell; a seat held by a
    waiting-list offer is free only for its holder, who claims it here (the entry leaves the list in
    the same transaction). A cancelled registration is re-activated rather than duplicated. A new or
    re-activated registration is confirmed by e-mail with the event's `.ics` (through the outbox).
    """
    if visitor.user is None:
        raise AuthRequired()
    event = _public_event(event_id, lock=True)
    now = timezone.now()
    seats = _settled_seat_state(event, visitor, now=now)
    if seats.registration_active:
        return RegistrationResult(
            registration=_registration(seats, event),
            created=False,
            already_registered=True,
            state_version=state_version(visitor=visitor),
        )
    policies.may_register(
        seats.facts,
        _facts(visitor, waiting=seats.entry_id is not None, holds_offer=seats.entry_offered),
        now=now,
    ).enforce()
    if seats.registration_id is not None:  # at most one is confirmed (a constraint): re-activate
        registration, created = _registration(seats, event), False
        registration.status = RegistrationStatus.CONFIRMED
        registration.save(update_fields=["status", "updated_at"])
    else:
        registration, created = Registration.objects.create(user=visitor.user, event=event), True
    if seats.entry_id is not None:  # the holder claims the seat: the entry leaves the list
        WaitlistEntry.objects.filter(pk=seats.entry_id).update(status=WaitlistStatus.CLAIMED, ended_at=now)
    version = bump_state_version(visitor=visitor)
    outbox.notify(
        NotificationKind.REGISTRATION_CONFIRMED,
        user=visitor.user,
        event=event,
        cause=f"registration-{registration.pk}-v{version}",
        registration=registration,
    )
    return RegistrationResult(
        registration=registration, created=created, already_registered=False, state_version=version
    )


@transaction.atomic
def cancel_registration(*, visitor: Visitor, event_id: str) -> CancelResult:
    """Cancel the visitor's registration; cancelling a cancelled one says so and changes nothing."""
    if visitor.user is None:
        raise AuthRequired()
    event = _public_event(event_id, lock=True)
    registration = (
        Registration.objects.filter(user=visitor.user, event=event)
        .annotate(anyone_waiting=_anyone_waiting("event"))
        .order_by("-updated_at", "-id")
        .first()
    )
    if registration is None:
        raise RegistrationNotFound()
    registration.event = event  # the answer names it: no second read
    if not registration.is_active:
        return CancelResult(
            registration=registration, already_cancelled=True, state_version=state_version(visitor=visitor)
        )
    now = timezone.now()
    policies.may_cancel(policies.EventFacts.of(event), _facts(visitor, registered=True), now=now).enforce()
    registration.status = RegistrationStatus.CANCELLED
    registration.save(update_fields=["status", "updated_at"])
    if registration.anyone_waiting:  # the freed seat goes to the first waiting person
        _process_queue(event, now=now)
    return CancelResult(
        registration=registration, already_cancelled=False, state_version=bump_state_version(visitor=visitor)
    )


@transaction.atomic
def cancel_attendee_registration(*, visitor: Visitor, registration_id: int) -> CancelResult:
    """An organiser cancels a person's registration (the admin): as when the person cancels, under the
    event's row lock, the freed seat goes to the first person waiting, and the holder's stateVersion
    rises. Cancelling a cancelled one changes nothing. Only an organiser (who may change registrations)
    may; the rule of when a registration can be cancelled is the person's too (`policies.may_cancel`)."""
    if visitor.user is None or not visitor.user.has_perm("events.change_registration"):
        raise PermissionDenied()
    event_pk = Registration.objects.filter(pk=registration_id).values_list("event_id", flat=True).first()
    if event_pk is None:
        raise RegistrationNotFound("No registration has this id.")
    event = Event.objects.select_for_update().get(pk=event_pk)
    registration = (
        Registration.objects.select_related("user")
        .annotate(anyone_waiting=_anyone_waiting("event"))
        .get(pk=registration_id)
    )
    registration.event = event
    holder = Visitor(user=registration.user)
    if not registration.is_active:
        return CancelResult(
            registration=registration, already_cancelled=True, state_version=state_version(visitor=holder)
        )
    now = timezone.now()
    policies.may_cancel(policies.EventFacts.of(event), _facts(holder, registered=True), now=now).enforce()
    registration.status = RegistrationStatus.CANCELLED
    registration.save(update_fields=["status", "updated_at"])
    if registration.anyone_waiting:
        _process_queue(event, now=now)
    return CancelResult(
        registration=registration, already_cancelled=False, state_version=bump_state_version(visitor=holder)
    )


@dataclass(frozen=True)
class EventStatusResult:
    event: Event
    changed: bool  # False: the event already had that status (a no-op, recorded as UNCHANGED)
    cancelled_registrations: int = 0
    closed_waitlist_entries: int = 0

    @property
    def outcome(self) -> str:
        return "OK" if self.changed else "UNCHANGED"


@transaction.atomic
def publish_event(*, visitor: Visitor, event_id: str) -> EventStatusResult:
    """An organiser publishes a draft (or cancelled) event: it becomes public and open."""
    return _set_status(visitor, event_id, EventStatus.PUBLISHED)


@transaction.atomic
def unpublish_event(*, visitor: Visitor, event_id: str) -> EventStatusResult:
    """An organiser takes an event back to draft: it leaves the catalogue; registrations are kept."""
    return _set_status(visitor, event_id, EventStatus.DRAFT)


@transaction.atomic
def cancel_event(*, visitor: Visitor, event_id: str) -> EventStatusResult:
    """An organiser cancels an event: every confirmed registration and every waiting-list entry ends
    with it, each person's stateVersion rises, and each is told by e-mail. The event stays visible,
    saying so."""
    result = _set_status(visitor, event_id, EventStatus.CANCELLED)
    if not result.changed:
        return result
    event, now = result.event, timezone.now()
    registrations = list(
        Registration.objects.select_related("user").filter(event=event, status=RegistrationStatus.CONFIRMED)
    )
    entries = list(
        WaitlistEntry.objects.select_related("user").filter(event=event, status__in=ACTIVE_WAITLIST)
    )
    Registration.objects.filter(pk__in=[r.pk for r in registrations]).update(
        status=RegistrationStatus.CANCELLED, updated_at=now
    )
    WaitlistEntry.objects.filter(pk__in=[e.pk for e in entries]).update(
        status=WaitlistStatus.CLOSED, ended_at=now
    )
    cause = f"event-{event.pk}-cancelled-{now.isoformat()}"
    for registration in registrations:
        registration.status = RegistrationStatus.CANCELLED
        bump_state_version(visitor=Visitor(user=registration.user))
        outbox.notify(
            NotificationKind.EVENT_CANCELLED,
            user=registration.user,
            event=event,
            cause=cause,
            registration=registration,
        )
    for entry in entries:
        bump_state_version(visitor=Visitor(user=entry.user))
        outbox.notify(
            NotificationKind.EVENT_CANCELLED, user=entry.user, event=event, cause=cause, entry=entry
        )
    return EventStatusResult(
        event=event,
        changed=True,
        cancelled_registrations=len(registrations),
        closed_waitlist_entries=len(entries),
    )


def _set_status(visitor: Visitor, event_id: str, status: str) -> EventStatusResult:
    """Lock the event and give it `status`; only an organiser (who may change events) may."""
    if visitor.user is None or not visitor.user.has_perm("events.change_event"):
        raise PermissionDenied()
    event = Event.objects.select_for_update().filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    if event.status == status:
        return EventStatusResult(event=event, changed=False)
    event.status = status
    event.save(update_fields=["status", "updated_at"])
    if status == EventStatus.PUBLISHED:
        _process_queue(event, now=timezone.now())
    return EventStatusResult(event=event, changed=True)


@dataclass(frozen=True)
class OfferResult:
    event: Event
    offered: int  # seats offered to the waiting list by this call

    @property
    def outcome(self) -> str:
        return "OK" if self.offered else "UNCHANGED"


@transaction.atomic
def offer_free_seats(*, visitor: Visitor, event_id: str) -> OfferResult:
    """An organiser changed the event (more seats, longer offers): under its row lock, expired offers
    end and every free seat goes to the next people waiting, each told by e-mail. Only an organiser
    (who may change events) may; an event nobody waits for changes nothing."""
    if visitor.user is None or not visitor.user.has_perm("events.change_event"):
        raise PermissionDenied()
    event = Event.objects.select_for_update().filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    return OfferResult(event=event, offered=len(_process_queue(event, now=timezone.now())))


@transaction.atomic
def merge_saved_events(*, token: str, user) -> int:
    """Move an anonymous visitor's saves to the account they signed in to; returns how many were new."""
    if not token:
        return 0
    saves = SavedEvent.objects.filter(visitor_token=token)
    already = set(SavedEvent.objects.filter(user=user).values_list("event_id", flat=True))
    new = [save for save in saves if save.event_id not in already]
    SavedEvent.objects.bulk_create([SavedEvent(user=user, event_id=save.event_id) for save in new])
    saves.delete()
    if new:
        bump_state_version(visitor=Visitor(user=user))
    return len(new)


def _public_event(event_id: str, *, lock: bool = False) -> Event:
    """The event a visitor may open (published or cancelled), locked for the transaction if asked."""
    events = Event.objects.public()
    event = (events.select_for_update() if lock else events).filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    return event


def _facts(
    visitor: Visitor, *, registered: bool = False, waiting: bool = False, holds_offer: bool = False
) -> policies.VisitorFacts:
    return policies.VisitorFacts(
        signed_in=visitor.user is not None,
        has_session=bool(visitor.key),
        registered=registered,
        waiting=waiting,
        holds_offer=holds_offer,
    )


# ── The waiting list ──────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class WaitlistResult:
    event: Event
    place: WaitlistPlace | None  # None once the person is no longer on the list
    already_waiting: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "ALREADY_WAITING" if self.already_waiting else "OK"


@dataclass(frozen=True)
class LeaveWaitlistResult:
    event: Event
    was_waiting: bool
    declined_offer: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "OK" if self.was_waiting else "NOT_WAITING"


@transaction.atomic
def join_waitlist(*, visitor: Visitor, event_id: str) -> WaitlistResult:
    """Put the signed-in visitor at the back of a full event's waiting list; joining again changes
    nothing and answers their place (and offer, if a seat is held for them)."""
    if visitor.user is None:
        raise AuthRequired("Sign in to join the waiting list.")
    event = _public_event(event_id, lock=True)
    now = timezone.now()
    seats = _settled_seat_state(event, visitor, now=now)
    waiting = seats.entry_id is not None
    policies.may_join_waitlist(
        seats.facts, _facts(visitor, registered=seats.registration_active, waiting=waiting), now=now
    ).enforce()
    if seats.entry_id is not None:
        entry = WaitlistEntry.objects.get(pk=seats.entry_id)
        return WaitlistResult(
            event=event,
            place=waitlist_place(entry),
            already_waiting=True,
            state_version=state_version(visitor=visitor),
        )
    entry = WaitlistEntry.objects.create(event=event, user=visitor.user, joined_at=now)
    return WaitlistResult(
        event=event,
        # Behind everyone who joined until now, read under the lock: `waitlist_place`'s count, not redone.
        place=WaitlistPlace(entry=entry, position=seats.joined_by_now + 1),
        already_waiting=False,
        state_version=bump_state_version(visitor=visitor),
    )


@transaction.atomic
def leave_waitlist(*, visitor: Visitor, event_id: str) -> LeaveWaitlistResult:
    """Leave the waiting list; with an offer, decline it (the seat goes to the next person at once).
    Leaving a list one is not on changes nothing and is not an error."""
    if visitor.user is None:
        raise AuthRequired()
    event = _public_event(event_id, lock=True)
    now = timezone.now()
    entry = _active_entry(visitor, event)
    if entry is None:
        return LeaveWaitlistResult(
            event=event, was_waiting=False, declined_offer=False, state_version=state_version(visitor=visitor)
        )
    declined = entry.has_offer
    _end_entry(entry, WaitlistStatus.DECLINED if declined else WaitlistStatus.LEFT, now=now)
    version = bump_state_version(visitor=visitor)
    if declined:
        _process_queue(event, now=now)
    return LeaveWaitlistResult(event=event, was_waiting=True, declined_offer=declined, state_version=version)


@transaction.atomic
def process_waitlists(*, event_pks: Iterable[int] | None = None, now: datetime | None = None) -> int:
    """The site's own work on waiting lists (tasks and organisers' capacity changes): end offers that
    have expired and offer every free seat to the next people in line. Returns the offers made.

    `event_pks=None` takes every event with an offer due or people waiting for a free seat.
    """
    now = now or timezone.now()
    if event_pks is None:
        event_pks = (
            WaitlistEntry.objects.filter(status__in=ACTIVE_WAITLIST)
            .values_list("event", flat=True)
            .distinct()
        )
    offered = 0
    for pk in sorted(set(event_pks)):  # one order for every caller: no lock-order deadlock
        event = Event.objects.select_for_update().filter(pk=pk).first()
        if event is not None:
            offered += len(_process_queue(event, now=now))
    return offered


@dataclass(frozen=True)
class _SeatState:
    """What a registration decides on, read in one statement after the event's row lock is taken.

    After, not in, the locking statement: under READ COMMITTED a `SELECT … FOR UPDATE` that waited
    for the lock still reads other rows as they were when it started, so counts taken in it could
    miss a seat taken by the transaction it waited for.
    """

    facts: policies.EventFacts
    anyone_waiting: bool  # an active entry (waiting or offered) on the event's list
    offer_due: bool  # an offer whose time is up: `_process_queue` must end it
    joined_by_now: int  # active entries that joined at or before `now`: the places ahead of a newcomer
    registration_id: int | None  # the visitor's confirmed registration, else their newest one
    registration_active: bool
    entry_id: int | None  # the visitor's active waiting-list entry
    entry_offered: bool


def _anyone_waiting(event_ref: str) -> Exists:
    return Exists(WaitlistEntry.objects.filter(event=OuterRef(event_ref), status__in=ACTIVE_WAITLIST))


def _settled_seat_state(event: Event, visitor: Visitor, *, now: datetime) -> _SeatState:
    """The seat state a person's decision is taken on, after the queue has done what was due.

    Expired offers end, and free seats go out, before the decision; the state is read again only if
    that changed something.
    """
    seats = _seat_state(event, visitor, now=now)
    if seats.anyone_waiting and (_process_queue(event, now=now, known=seats) or seats.offer_due):
        seats = _seat_state(event, visitor, now=now)
    return seats


def _seat_state(event: Event, visitor: Visitor, *, now: datetime) -> _SeatState:
    mine = Registration.objects.filter(event=OuterRef("pk"), user=visitor.user).order_by("-updated_at", "-id")
    entry = WaitlistEntry.objects.filter(event=OuterRef("pk"), user=visitor.user, status__in=ACTIVE_WAITLIST)
    row = (
        Event.objects.filter(pk=event.pk)
        .with_seats()
        .annotate(
            anyone_waiting=_anyone_waiting("pk"),
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
    return _SeatState(
        facts=_locked_facts(event, row),
        anyone_waiting=row["anyone_waiting"],
        offer_due=row["offer_due"],
        joined_by_now=row["joined_by_now"],
        registration_id=row["active_id"] or row["newest_id"],
        registration_active=row["active_id"] is not None,
        entry_id=row["entry_id"],
        entry_offered=row["entry_status"] == WaitlistStatus.OFFERED,
    )


def _registration(seats: _SeatState, event: Event) -> Registration:
    assert seats.registration_id is not None
    registration = Registration.objects.get(pk=seats.registration_id)
    registration.event = event
    return registration


def _active_entry(visitor: Visitor, event: Event) -> WaitlistEntry | None:
    return WaitlistEntry.objects.filter(user=visitor.user, event=event, status__in=ACTIVE_WAITLIST).first()


SEAT_COUNTS = ("confirmed_count", "held_count")  # annotated by EventQuerySet.with_seats


def _locked_facts(event: Event, counted: Mapping[str, Any] | None = None) -> policies.EventFacts:
    """The event's facts with its seats counted now, under its row lock (taken by the caller), by
    `with_seats` (the one definition of a taken seat); `counted` when the caller has read them."""
    if event.capacity is None:
        return policies.EventFacts.of(event)
    if counted is None:
        counted = Event.objects.filter(pk=event.pk).with_seats().values(*SEAT_COUNTS).get()
    return policies.EventFacts.of(event, confirmed=counted["confirmed_count"], held=counted["held_count"])


def _end_entry(entry: WaitlistEntry, status: WaitlistStatus, *, now: datetime) -> None:
    entry.status = status
    entry.ended_at = now
    entry.save(update_fields=["status", "ended_at"])


def _process_queue(event: Event, *, now: datetime, known: _SeatState | None = None) -> list[WaitlistEntry]:
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
        _end_entry(entry, WaitlistStatus.EXPIRED, now=now)
        bump_state_version(visitor=Visitor(user=entry.user))
        outbox.notify(
            NotificationKind.OFFER_EXPIRED,
            user=entry.user,
            event=event,
            cause=f"entry-{entry.pk}",
            entry=entry,
        )
    facts = known.facts if known is not None and not due else _locked_facts(event)
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
