"""Registering and cancelling: seats are taken and freed through the seat ledger (`ledger`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import AuthRequired
from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import policies, tickets
from ..choices import HOLDING_SEAT, OWED, NotificationKind, PaymentStatus, RegistrationStatus, WaitlistStatus
from ..errors import AnswersClosed, NotOrganiser, RegistrationNotFound, TicketTypeSoldOut
from ..models import Event, Registration, WaitlistEntry
from ..questions import form_of
from ..selectors import staff_facts, state_version
from .answers import validate_answers
from .common import bump_state_version, public_event, tell_person, visitor_facts
from .door import new_ticket
from .ledger import (
    SeatState,
    anyone_waiting,
    recount_event,
    registration_of,
    seats_changed,
    settled_seat_state,
    take_seat,
    unlocked_seat_state,
)
from .payments import PaymentStart, payment_start


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


@dataclass(frozen=True)
class _Choice:
    """What the caller asked for besides the event: the answers, the ticket type, the payment method."""

    answers: Mapping[str, Any] | None = None
    ticket_type: str | None = None
    payment_method: str | None = None


@atomic_use_case
def register_event(
    *,
    visitor: Visitor,
    event_id: str,
    answers: Mapping[str, Any] | None = None,
    ticket_type: str | None = None,
    payment_method: str | None = None,
    read_first: tuple[Event, SeatState] | None = None,
) -> RegistrationResult:
    """Register the signed-in visitor with their `answers` to the event's questions, for the ticket
    type `ticket_type` (needed when the event sells several; `events.tickets.choose`), or return the
    registration they already have (its answers unchanged).

    A free type registers as ever. A paid one starts its payment (`payments.payment_start`, with the
    `payment_method` chosen, a bank transfer by default): a transfer holds the seat until its deadline
    (`pending_payment`, with its reference; the e-mail carries the instructions), paying at the door
    confirms at once with the amount due there. The payment is in the registration's own row, so a
    paid registration is as many statements as a free one. Every type draws on the event's one
    capacity; a type with a cap of its own is decided under the event's row lock, where its
    registrations are counted.

    The answers are checked by `answers.validate_answers` on the event read with its seats (its
    questions are in its row), before anything is written: a refusal (`AnswersInvalid`) writes
    nothing. They are stored in the registration's own row, so a registration with answers is as many
    statements as one without. An event that requires approval gets a registration waiting for it
    (`pending_approval`): it holds its seat, has no ticket yet, and its e-mail says so.

    Read first without the event's row lock (`ledger.unlocked_seat_state`, one statement): a refusal
    stands on that read, which was true when it was taken and writes nothing, so a full event answers
    a rush without anyone waiting for its row. A free seat is then taken by one conditional UPDATE
    (`ledger.take_seat`), which cannot oversell. The rest is decided under the row lock, after the
    queue has done what was due (`_register_locked`): a seat held for the visitor by a waiting-list
    offer (free only for its holder, who claims it: the entry leaves the list in the same
    transaction), an offer whose time is up, people waiting, a seat counter that disagrees with the
    rows, and a race lost to someone else or to the visitor's own other call. Through `perform` that
    first read is made before the write's transaction opens (`register_event_read_first`, the row's
    `read_first`), so a refusal it decides opens none.

    A cancelled registration is re-activated rather than duplicated. A new or re-activated
    registration is confirmed by e-mail with the event's `.ics` (through the outbox).
    """
    choice = _Choice(answers, ticket_type, payment_method)
    event, seats = read_first or register_event_read_first(visitor=visitor, event_id=event_id)
    if seats.registration_active:
        return _already_registered(visitor, event, seats)
    now = timezone.now()
    answer = policies.may_register(seats.facts, _visitor_facts(visitor, seats), now=now)
    stored, spec = answers_and_ticket_type(event, answers=answers, ticket_type=ticket_type, now=now)
    start = payment_start(event, spec, payment_method, now=now, approval=event.requires_approval)
    if answer.allowed and seats.counter_right and not seats.anyone_waiting and spec.cap is None:
        result = _take_and_confirm(visitor, event, seats, now=now, answers=stored, start=start)
        if result is not None:
            return result
    return _register_locked(visitor, event_id, choice)


def register_event_read_first(*, visitor: Visitor, event_id: str, **_: Any) -> tuple[Event, SeatState]:
    """`register_event`'s first read: the event and the visitor's seat state without the row lock
    (`ledger.unlocked_seat_state`, one statement), and the refusal that read decides (a full event,
    registration closed), unless an offer whose time is up might free a seat first (then decided
    locked). A visitor already registered is not refused here: their registration is the answer."""
    if visitor.user is None:
        raise AuthRequired()
    now = timezone.now()
    event, seats = unlocked_seat_state(event_id, visitor, now=now)
    if not seats.registration_active and not seats.offer_due:
        policies.may_register(seats.facts, _visitor_facts(visitor, seats), now=now).enforce()
    return event, seats


def answers_and_ticket_type(
    event: Event, *, answers: Mapping[str, Any] | None, ticket_type: str | None, now: datetime
) -> tuple[dict[str, Any], tickets.TicketTypeSpec]:
    """The answers to store and the ticket type taken, or the refusal of either, read from the event
    alone (nothing written): the same checks wherever a registration is decided or previewed (the MCP
    confirmation, `actions.registration_preview`). A refusal of answers to an event that asks no
    questions names its ticket types on sale (a small model put the type there; evals/README.md)."""
    types = tickets.types_of(event)
    on_sale = [spec.identifier for spec in tickets.on_sale(types, now)]
    stored = validate_answers(questions=form_of(event.question_form), answers=answers, ticket_types=on_sale)
    return stored, tickets.choose(types, ticket_type, now=now)


class _RegisteredMeanwhile(Exception):
    """The visitor's own other call re-activated their registration first: decide again, locked."""


def _take_and_confirm(
    visitor: Visitor,
    event: Event,
    seats: SeatState,
    *,
    now: datetime,
    answers: dict[str, Any],
    start: PaymentStart,
) -> RegistrationResult | None:
    """Take a seat without having waited for the lock, and confirm the registration; None when the
    seat went to someone else first or the visitor registered meanwhile (nothing is kept)."""
    try:
        with transaction.atomic():  # a savepoint: a race lost after the seat was taken gives it back
            if not take_seat(event, now=now):
                return None
            return _confirm(visitor, event, seats, now=now, answers=answers, start=start)
    except (IntegrityError, _RegisteredMeanwhile):  # one confirmed registration per person (a constraint)
        return None


def _register_locked(visitor: Visitor, event_id: str, choice: _Choice) -> RegistrationResult:
    """The decision under the event's row lock, on the seat state read after it and settled by the
    queue (and the answers checked against the questions read with it, the ticket type's own cap
    against its registrations counted now); `seats_taken` is recounted from the rows."""
    event = public_event(event_id, lock=True)
    now = timezone.now()
    seats = settled_seat_state(event, visitor, now=now)
    if seats.registration_active:
        return _already_registered(visitor, event, seats)
    policies.may_register(seats.facts, _visitor_facts(visitor, seats), now=now).enforce()
    stored, spec = answers_and_ticket_type(
        event, answers=choice.answers, ticket_type=choice.ticket_type, now=now
    )
    if spec.cap is not None:
        taken = Registration.objects.filter(event=event, ticket_type=spec.stored, status__in=HOLDING_SEAT)
        if taken.count() >= spec.cap:
            raise TicketTypeSoldOut()
    start = payment_start(event, spec, choice.payment_method, now=now, approval=event.requires_approval)
    result = _confirm(visitor, event, seats, now=now, answers=stored, start=start)
    recount_event(event)
    return result


def _visitor_facts(visitor: Visitor, seats: SeatState) -> policies.VisitorFacts:
    return visitor_facts(visitor, waiting=seats.entry_id is not None, holds_offer=seats.entry_offered)


def _already_registered(visitor: Visitor, event: Event, seats: SeatState) -> RegistrationResult:
    return RegistrationResult(
        registration=registration_of(seats, event),
        created=False,
        already_registered=True,
        state_version=state_version(visitor=visitor),
    )


#: The e-mail a new registration's status sends.
FIRST_MAIL = {
    RegistrationStatus.PENDING_APPROVAL: NotificationKind.REGISTRATION_PENDING,
    RegistrationStatus.PENDING_PAYMENT: NotificationKind.PAYMENT_DUE,
    RegistrationStatus.CONFIRMED: NotificationKind.REGISTRATION_CONFIRMED,
}


def _confirm(
    visitor: Visitor,
    event: Event,
    seats: SeatState,
    *,
    now: datetime,
    answers: dict[str, Any],
    start: PaymentStart,
) -> RegistrationResult:
    """Create or re-activate the visitor's registration on a seat already theirs (taken, or held for
    them), with its answers, its ticket type and payment (`start`) and a new ticket (none yet while it
    waits for approval or for a transfer), claim their waiting-list entry, and queue the confirmation
    (or the payment's instructions, or the news that it waits for approval). A registration that once
    carried money is not re-activated: a new one keeps its record apart."""
    assert visitor.user is not None  # register_event refuses anyone else first
    # A new ticket either way (an old code admits nobody); none until confirmed.
    ticket = new_ticket(now=now) if start.ticketed else {"ticket_code": None, "ticket_issued_at": None}
    values = {"status": start.status, "answers": answers, **ticket, **start.fields}
    registration = registration_of(seats, event) if seats.registration_id is not None else None
    if registration is not None and registration.is_active:  # at most one holds a seat (a constraint)
        raise _RegisteredMeanwhile()
    if registration is not None and registration.amount == 0:  # re-activate
        created = False
        for name, value in values.items():
            setattr(registration, name, value)
        registration.save(update_fields=[*values, "updated_at"])
    else:
        registration = Registration.objects.create(user=visitor.user, event=event, **values)
        created = True
    if seats.entry_id is not None:  # the holder claims the seat: the entry leaves the list
        WaitlistEntry.objects.filter(pk=seats.entry_id).update(status=WaitlistStatus.CLAIMED, ended_at=now)
    version = tell_person(registration, FIRST_MAIL[RegistrationStatus(start.status)], visitor=visitor)
    return RegistrationResult(
        registration=registration, created=created, already_registered=False, state_version=version
    )


@atomic_use_case
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
    freed seat goes to the first person waiting, `seats_taken` is recounted and the holder's
    stateVersion rises."""
    if not registration.is_active:
        return CancelResult(
            registration=registration, already_cancelled=True, state_version=state_version(visitor=holder)
        )
    now = timezone.now()
    facts = visitor_facts(holder, registered=True)
    policies.may_cancel(policies.EventFacts.of(registration.event), facts, now=now).enforce()
    registration.status = RegistrationStatus.CANCELLED
    fields = ["status", "updated_at"]
    if registration.payment_status in OWED:  # nothing was paid: nothing is owed any more
        registration.payment_status = PaymentStatus.UNPAID
        fields.append("payment_status")
    registration.save(update_fields=fields)
    seats_changed(registration.event, now=now, anyone_waiting=anyone_waiting)
    return CancelResult(
        registration=registration, already_cancelled=False, state_version=bump_state_version(visitor=holder)
    )


@dataclass(frozen=True)
class AnswersResult(_RegistrationChange):
    changed: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "OK" if self.changed else "UNCHANGED"


@atomic_use_case
def update_registration_answers(
    *, visitor: Visitor, event_id: str, answers: Mapping[str, Any] | None = None
) -> AnswersResult:
    """Replace the person's answers to the event's questions, checked as at registration
    (`validate_answers`; the organisers' own answers are kept), until the event starts or the earlier
    time its organisers closed changes at (`Event.answers_close_at`). The registration's row is locked;
    the same answers again change nothing (no stateVersion rise)."""
    if visitor.user is None:
        raise AuthRequired()
    event = public_event(event_id)
    registration = (
        Registration.objects.select_for_update(no_key=True)
        .filter(user=visitor.user, event=event, status__in=HOLDING_SEAT)
        .first()
    )
    if registration is None:
        raise RegistrationNotFound()
    registration.event = event
    now = timezone.now()
    if not policies.may_change_answers(
        policies.EventFacts.of(event), closes_at=event.answers_close_at, now=now
    ):
        raise AnswersClosed()
    stored = validate_answers(
        questions=form_of(event.question_form), answers=answers, kept=registration.answers
    )
    if stored == registration.answers:
        return AnswersResult(
            registration=registration, changed=False, state_version=state_version(visitor=visitor)
        )
    registration.answers = stored
    registration.save(update_fields=["answers", "updated_at"])
    return AnswersResult(
        registration=registration, changed=True, state_version=bump_state_version(visitor=visitor)
    )


@dataclass(frozen=True)
class StaffAnswersResult:
    registration: Registration
    changed: bool
    #: The manager's own stateVersion (the person's state does not change: they never see these).
    state_version: int

    @property
    def event(self) -> Event:
        return self.registration.event

    @property
    def outcome(self) -> str:
        return "OK" if self.changed else "UNCHANGED"


@atomic_use_case
def update_staff_answers(
    *, visitor: Visitor, registration_id: int, answers: Mapping[str, Any]
) -> StaffAnswersResult:
    """The event's managers fill in their own (organisers-only) questions for one registration, checked
    as any answer is (`validate_answers`, `staff=True`); the person's answers are kept as they are and
    only decide which of those questions are shown. `answers_close_at` closes the people's changes, not
    these. The registration's row is locked; the same answers again change nothing. Only the event's
    managers and the superusers (`may_manage_event`)."""
    if visitor.user is None:
        raise AuthRequired()
    registration = (
        Registration.objects.select_for_update(no_key=True)
        .select_related("event")
        .filter(pk=registration_id)
        .first()
    )
    if registration is None:
        raise RegistrationNotFound("No registration has this id.")
    event = registration.event
    if not policies.may_manage_event(staff_facts(visitor.user, event)):
        raise NotOrganiser()
    form = form_of(event.question_form)
    theirs = {q.identifier for q in form if q.staff_only}
    kept = {key: answer for key, answer in (registration.answers or {}).items() if key not in theirs}
    ours = validate_answers(
        questions=tuple(q for q in form if q.staff_only),
        answers=answers,
        staff=True,
        shown_by={key: answer.get("value") for key, answer in kept.items()},
    )
    stored = {**kept, **ours}
    if stored == registration.answers:
        return StaffAnswersResult(
            registration=registration, changed=False, state_version=state_version(visitor=visitor)
        )
    registration.answers = stored
    registration.save(update_fields=["answers", "updated_at"])
    return StaffAnswersResult(
        registration=registration, changed=True, state_version=state_version(visitor=visitor)
    )
