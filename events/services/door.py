"""The door: tickets, check-in at the door, and who may run an event (layer 2).

A confirmed registration holds its ticket (`Registration.ticket_code`): cancelling voids it, and
registering again issues a new one (`new_ticket`, in the same statement as the registration's own).
At the door, one standing check-in per registration: the registration's row lock orders concurrent
scans, and a constraint backs it. The same scan sent twice (its `scan_id`) is one scan. What staff
may do is in the policies (`may_check_in`, `may_undo_check_in`, `may_manage_event`), on the
`staff_facts` the selectors read.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone, translation

from core.errors import AuthRequired
from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import policies
from ..choices import OWED, NotificationKind, PaidVia, PaymentStatus, RegistrationStatus
from ..errors import (
    AttendeeNotFound,
    EventNotFound,
    NoTicket,
    TicketCancelled,
    TicketForAnotherEvent,
    TicketUnknown,
)
from ..mail import outbox
from ..models import CheckIn, Event, Registration
from ..questions import ShownAnswer, shown_answers
from ..selectors import staff_facts, state_version
from .common import bump_state_version

#: 20 random bytes: 160 bits, as 32 base32 characters (letters and 2–7: nothing to mistake when typed).
TICKET_BYTES = 20
FOUND_AT_MOST = 20


def new_ticket_code() -> str:
    return base64.b32encode(secrets.token_bytes(TICKET_BYTES)).decode()


def normalise_code(code: str) -> str:
    """What a person typed or a scanner sent, as stored: no spaces or dashes, upper case."""
    return "".join(code.split()).replace("-", "").upper()


def new_ticket(*, now: datetime) -> dict[str, object]:
    """The fields of a freshly issued ticket, to write with the registration they belong to."""
    return {"ticket_code": new_ticket_code(), "ticket_issued_at": now}


def event_for_staff(visitor: Visitor, event_id: str, *, allowed=policies.may_check_in) -> Event:
    """The event `event_id` (any status: the door opens for drafts being rehearsed too), if the visitor
    may run its door (`allowed`); refuses otherwise."""
    if visitor.user is None:
        raise AuthRequired()
    event = Event.objects.filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    allowed(staff_facts(visitor.user, event)).enforce()
    return event


@dataclass(frozen=True)
class CheckInResult:
    event: Event
    registration: Registration
    check_in: CheckIn
    admitted: bool  # this call let the person in
    already_checked_in: bool  # someone did before (check_in is theirs)
    state_version: int  # the staff member's
    #: What the door took (integer TWD) for a registration paid there by this check-in; 0 otherwise.
    paid_at_door: int = 0

    @property
    def attendee(self) -> Attendee:
        return attendee_of(self.registration, self.check_in)

    @property
    def outcome(self) -> str:
        return "OK" if self.admitted else "ALREADY_CHECKED_IN"


def _registration_to_admit(event: Event, *, ticket: str, attendee_id: int | None) -> int:
    """The registration a scan or a choice names, refused as the door must say it."""
    if ticket:
        row = (
            Registration.objects.filter(ticket_code=normalise_code(ticket))
            .values_list("pk", "event_id")
            .first()
        )
        if row is None:
            raise TicketUnknown()
        registration_pk, event_pk = row
        if event_pk != event.pk:
            raise TicketForAnotherEvent()
        return registration_pk
    chosen = Registration.objects.filter(pk=attendee_id, event=event) if attendee_id else None
    found = chosen.values_list("pk", flat=True).first() if chosen is not None else None
    if found is None:
        raise AttendeeNotFound()
    return found


@atomic_use_case
def check_in_attendee(
    *,
    visitor: Visitor,
    event_id: str,
    ticket: str = "",
    attendee_id: int | None = None,
    scan_id: UUID | None = None,
    scanned_at: datetime | None = None,
) -> CheckInResult:
    """Let the holder of `ticket` (a scan) or registration `attendee_id` (a choice at the door) in.

    Door staff and managers of the event only. Under the registration's row lock: a cancelled one is
    refused; a standing check-in answers "already checked in" with its time and staff (the same
    `scan_id` again answers as the first time: it is one scan); otherwise one check-in is written.
    A registration whose money is due at the door is paid there by its check-in (`paid_at_door`, one
    transition with it); so is one still waiting for its transfer when the event lets those pay at
    the door instead (`Event.pending_may_pay_at_door`), which is confirmed then, with its ticket.
    """
    event = event_for_staff(visitor, event_id)
    registration_pk = _registration_to_admit(event, ticket=ticket, attendee_id=attendee_id)
    registration = Registration.objects.select_for_update().select_related("user").get(pk=registration_pk)
    registration.event = event
    if registration.status != RegistrationStatus.CONFIRMED and not _pays_at_door_instead(registration):
        raise TicketCancelled()
    standing = (
        CheckIn.objects.select_related("staff")
        .filter(registration=registration, undone_at__isnull=True)
        .first()
    )
    if standing is not None:
        first_scan = scan_id is not None and standing.scan_id == scan_id
        version = state_version(visitor=visitor)
        return CheckInResult(event, registration, standing, first_scan, not first_scan, version)
    now = timezone.now()
    try:
        with transaction.atomic():
            check_in = CheckIn.objects.create(
                registration=registration,
                staff=visitor.user,
                scan_id=scan_id,
                scanned_at=scanned_at,
                checked_in_at=now,
                scan_time_in_future=policies.scan_time_in_future(scanned_at, now=now),
            )
    except IntegrityError:  # this scan_id was another registration's scan: it is not a new one
        raise TicketUnknown("This scan id was already used for another ticket.") from None
    paid = _pay_at_door(registration, now=now)
    bump_state_version(visitor=Visitor(user=registration.user))
    # The staff member's state changes too: a confirmation they gave for this check-in is spent by it,
    # so replaying it after an undo asks them again.
    version = bump_state_version(visitor=visitor)
    return CheckInResult(event, registration, check_in, True, False, version, paid_at_door=paid)


def _pays_at_door_instead(registration: Registration) -> bool:
    """Still waiting for a transfer, at an event that lets those pay at the door instead."""
    return registration.is_pending_payment and registration.event.pending_may_pay_at_door


def _pay_at_door(registration: Registration, *, now: datetime) -> int:
    """The money due at the door, taken by the check-in (under the registration's lock): paid in
    full, confirmed with a ticket if it was still waiting for a transfer. Returns the amount."""
    if registration.payment_status not in OWED or not registration.amount:
        return 0
    fields = ["payment_status", "paid_amount", "paid_at", "paid_via", "updated_at"]
    if registration.status != RegistrationStatus.CONFIRMED:
        registration.status = RegistrationStatus.CONFIRMED
        for name, value in new_ticket(now=now).items():
            setattr(registration, name, value)
        fields += ["status", "ticket_code", "ticket_issued_at"]
    registration.payment_status = PaymentStatus.PAID
    registration.paid_amount, registration.paid_at, registration.paid_via = (
        registration.amount,
        now,
        PaidVia.DOOR,
    )
    registration.save(update_fields=fields)
    return registration.amount


@dataclass(frozen=True)
class UndoResult:
    event: Event
    registration: Registration
    undone: bool
    state_version: int

    @property
    def outcome(self) -> str:
        return "OK" if self.undone else "NOT_CHECKED_IN"


@atomic_use_case
def undo_check_in(*, visitor: Visitor, event_id: str, attendee_id: int) -> UndoResult:
    """Take back a check-in made by mistake: within minutes, by whoever made it or a manager."""
    event = event_for_staff(visitor, event_id)
    registration_pk = _registration_to_admit(event, ticket="", attendee_id=attendee_id)
    registration = Registration.objects.select_for_update().get(pk=registration_pk)
    registration.event = event
    standing = CheckIn.objects.filter(registration=registration, undone_at__isnull=True).first()
    if standing is None:
        return UndoResult(event, registration, False, state_version(visitor=visitor))
    now, staff = timezone.now(), visitor.user
    assert staff is not None  # event_for_staff refused anyone signed out
    policies.may_undo_check_in(
        staff_facts(staff, event),
        by_same_person=standing.staff_id == staff.pk,
        checked_in_at=standing.checked_in_at,
        now=now,
    ).enforce()
    standing.undone_at, standing.undone_by = now, staff
    standing.save(update_fields=["undone_at", "undone_by"])
    bump_state_version(visitor=Visitor(user=registration.user))
    return UndoResult(event, registration, True, bump_state_version(visitor=visitor))


@dataclass(frozen=True)
class Attendee:
    """One confirmed registration as the door sees it. `name` and `email` are the person's own words:
    untrusted content for an agent."""

    attendee_id: int
    name: str
    email: str  # masked: enough to tell two people apart
    checked_in_at: datetime | None
    checked_in_by: str
    #: The answers the door needs (the event's `show_at_door` questions: a dietary need, a T-shirt
    #: size), in the staff member's language; the person's own words, untrusted content for an agent.
    door_answers: tuple[ShownAnswer, ...] = ()
    #: Their payment: its status, its amount (integer TWD) and what the door is to take (0: nothing).
    payment_status: str = PaymentStatus.NONE
    amount: int = 0
    due_at_door: int = 0


@dataclass(frozen=True)
class AttendeesResult:
    event: Event
    attendees: list[Attendee]
    confirmed: int
    checked_in: int


def attendee_of(registration: Registration, check_in: CheckIn | None) -> Attendee:
    staff = check_in.staff if check_in is not None else None
    return Attendee(
        attendee_id=registration.pk,
        name=display_name(registration.user),
        email=mask_email(registration.user.email),
        checked_in_at=check_in.checked_in_at if check_in is not None else None,
        checked_in_by=display_name(staff) if staff is not None else "",
        door_answers=tuple(shown_answers(registration, translation.get_language(), staff=True, door=True)),
        payment_status=registration.payment_status,
        amount=registration.amount,
        due_at_door=registration.amount if registration.owes and _may_pay_at_door(registration) else 0,
    )


def _may_pay_at_door(registration: Registration) -> bool:
    return registration.payment_status == PaymentStatus.AT_DOOR or _pays_at_door_instead(registration)


def attendee_by_id(event: Event, attendee_id: int) -> Attendee:
    """One attendee of `event` as the door sees them (the caller checked the visitor is its staff)."""
    registration = Registration.objects.select_related("user").filter(pk=attendee_id, event=event).first()
    if registration is None:
        raise AttendeeNotFound()
    standing = CheckIn.objects.select_related("staff").filter(
        registration=registration, undone_at__isnull=True
    )
    return attendee_of(registration, standing.first())


def mask_email(email: str) -> str:
    local, _, domain = email.partition("@")
    return f"{local[:1]}***@{domain}" if domain else ""


def display_name(user) -> str:
    return user.get_full_name() or user.username


def _counts(event: Event) -> tuple[int, int]:
    confirmed = Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED)
    checked_in = CheckIn.objects.filter(registration__in=confirmed, undone_at__isnull=True)
    return confirmed.count(), checked_in.count()


def find_attendee(*, visitor: Visitor, event_id: str, query: str = "") -> AttendeesResult:
    """The event's confirmed attendees (and those who may pay at the door instead of their transfer)
    whose name or username contains `query`, or whose e-mail address is `query` whole (all of them,
    the first FOUND_AT_MOST, when it is empty), each with their check-in and what they owe at the
    door; and the live counts. The address is shown masked (`mask_email`): a search by a part of it
    would give it back one character at a time."""
    event = event_for_staff(visitor, event_id)
    listed = [RegistrationStatus.CONFIRMED]
    if event.pending_may_pay_at_door:  # those still waiting for a transfer may pay here instead
        listed.append(RegistrationStatus.PENDING_PAYMENT)
    registrations = Registration.objects.filter(event=event, status__in=listed).select_related("user")
    words = query.strip()
    if words:
        registrations = registrations.filter(
            Q(user__first_name__icontains=words)
            | Q(user__last_name__icontains=words)
            | Q(user__username__icontains=words)
            | Q(user__email__iexact=words)
        )
    found = list(registrations.order_by("user__first_name", "user__username", "pk")[:FOUND_AT_MOST])
    for registration in found:
        registration.event = event  # its questions are the event's: read once
    standing = {
        check_in.registration_id: check_in
        for check_in in CheckIn.objects.select_related("staff").filter(
            registration__in=found, undone_at__isnull=True
        )
    }
    attendees = [attendee_of(registration, standing.get(registration.pk)) for registration in found]
    confirmed, checked_in = _counts(event)
    return AttendeesResult(event, attendees, confirmed, checked_in)


@dataclass(frozen=True)
class ResendResult:
    event: Event
    registration: Registration
    state_version: int


@atomic_use_case
def resend_ticket(*, visitor: Visitor, event_id: str) -> ResendResult:
    """E-mail the visitor their ticket for `event_id` again (through the outbox)."""
    if visitor.user is None:
        raise AuthRequired()
    registration = (
        Registration.objects.select_related("event")
        .filter(user=visitor.user, event__public_id=event_id, status=RegistrationStatus.CONFIRMED)
        .exclude(ticket_code=None)
        .first()
    )
    if registration is None:
        raise NoTicket()
    outbox.notify(
        NotificationKind.TICKET,
        user=visitor.user,
        event=registration.event,
        cause=f"ticket-{registration.pk}-{timezone.now().isoformat()}",
        registration=registration,
    )
    return ResendResult(registration.event, registration, state_version(visitor=visitor))
