"""Registering and cancelling: seats are taken and freed under the event's row lock (`ledger`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.errors import AuthRequired
from core.visitors import Visitor

from .. import policies
from ..choices import NotificationKind, RegistrationStatus, WaitlistStatus
from ..errors import RegistrationNotFound
from ..mail import outbox
from ..models import Event, Registration, WaitlistEntry
from ..selectors import state_version
from .common import bump_state_version, public_event, visitor_facts
from .door import new_ticket
from .ledger import anyone_waiting, process_queue, registration_of, settled_seat_state


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
    event = public_event(event_id, lock=True)
    now = timezone.now()
    seats = settled_seat_state(event, visitor, now=now)
    if seats.registration_active:
        return RegistrationResult(
            registration=registration_of(seats, event),
            created=False,
            already_registered=True,
            state_version=state_version(visitor=visitor),
        )
    policies.may_register(
        seats.facts,
        visitor_facts(visitor, waiting=seats.entry_id is not None, holds_offer=seats.entry_offered),
        now=now,
    ).enforce()
    ticket = new_ticket(now=now)  # a new ticket either way: an old code admits nobody
    if seats.registration_id is not None:  # at most one is confirmed (a constraint): re-activate
        registration, created = registration_of(seats, event), False
        registration.status = RegistrationStatus.CONFIRMED
        for field, value in ticket.items():
            setattr(registration, field, value)
        registration.save(update_fields=["status", "updated_at", *ticket])
    else:
        registration = Registration.objects.create(user=visitor.user, event=event, **ticket)
        created = True
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
    event = public_event(event_id, lock=True)
    registration = (
        Registration.objects.filter(user=visitor.user, event=event)
        .annotate(anyone_waiting=anyone_waiting("event"))
        .order_by("-updated_at", "-id")
        .first()
    )
    if registration is None:
        raise RegistrationNotFound()
    registration.event = event  # the answer names it: no second read
    return cancel_locked(registration, holder=visitor, anyone_waiting=registration.anyone_waiting)


def cancel_locked(registration: Registration, *, holder: Visitor, anyone_waiting: bool) -> CancelResult:
    """Cancel `registration` for whoever asks, its event locked by the caller (`anyone_waiting` read
    under the lock): a cancelled one says so and changes nothing; otherwise `may_cancel` decides, the
    freed seat goes to the first person waiting and the holder's stateVersion rises."""
    if not registration.is_active:
        return CancelResult(
            registration=registration, already_cancelled=True, state_version=state_version(visitor=holder)
        )
    now = timezone.now()
    facts = visitor_facts(holder, registered=True)
    policies.may_cancel(policies.EventFacts.of(registration.event), facts, now=now).enforce()
    registration.status = RegistrationStatus.CANCELLED
    registration.save(update_fields=["status", "updated_at"])
    if anyone_waiting:  # the freed seat goes to the first waiting person
        process_queue(registration.event, now=now)
    return CancelResult(
        registration=registration, already_cancelled=False, state_version=bump_state_version(visitor=holder)
    )
