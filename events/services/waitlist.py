"""The waiting list: joining and leaving (declining an offer). The site's own sweep of due offers is
`organiser.offer_free_seats`, performed by the worker as the declared system actor (`events.tasks`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils import timezone

from core.errors import AuthRequired
from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import policies
from ..choices import WaitlistStatus
from ..models import Event, WaitlistEntry
from ..selectors import WaitlistPlace, state_version, waitlist_place
from .common import bump_state_version, public_event, visitor_facts
from .ledger import active_entry, end_entry, seats_changed, settled_seat_state


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


@atomic_use_case
def join_waitlist(*, visitor: Visitor, event_id: str) -> WaitlistResult:
    """Put the signed-in visitor at the back of a full event's waiting list; joining again changes
    nothing and answers their place (and offer, if a seat is held for them)."""
    if visitor.user is None:
        raise AuthRequired("Sign in to join the waiting list.")
    event = public_event(event_id, lock=True)
    now = timezone.now()
    seats = settled_seat_state(event, visitor, now=now)
    waiting = seats.entry_id is not None
    policies.may_join_waitlist(
        seats.facts, visitor_facts(visitor, registered=seats.registration_active, waiting=waiting), now=now
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


@atomic_use_case
def leave_waitlist(*, visitor: Visitor, event_id: str) -> LeaveWaitlistResult:
    """Leave the waiting list; with an offer, decline it (the seat goes to the next person at once).
    Leaving a list one is not on changes nothing and is not an error."""
    if visitor.user is None:
        raise AuthRequired()
    event = public_event(event_id, lock=True)
    now = timezone.now()
    entry = active_entry(visitor, event)
    if entry is None:
        return LeaveWaitlistResult(
            event=event, was_waiting=False, declined_offer=False, state_version=state_version(visitor=visitor)
        )
    declined = entry.has_offer
    end_entry(entry, WaitlistStatus.DECLINED if declined else WaitlistStatus.LEFT, now=now)
    version = bump_state_version(visitor=visitor)
    if declined:  # the held seat is free: to the next person waiting
        seats_changed(event, now=now)
    return LeaveWaitlistResult(event=event, was_waiting=True, declined_offer=declined, state_version=version)
