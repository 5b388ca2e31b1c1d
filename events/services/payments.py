"""Payments of paid registrations: integer TWD, each change one transition under the registration's
row lock (its event's first, where a seat may change), recorded once by the action's Activity row.

A registration for a paid ticket type carries its payment in its own row (`Registration.amount`,
`payment_status`, …: `payment_fields` at registration). A bank transfer holds the seat until its
deadline (`pending_payment`); the person may report their transfer (`report_payment`, 查帳中); the
event's managers confirm it (`confirm_payment`) or a bank statement's row does (`apply_bank_row`,
once per row: its checksum); the sweep expires what is not paid in time (`expire_payments`), its
seat going to the first person waiting; a refund is recorded by a manager (`refund_payment`) once the
registration no longer holds its seat or its event is cancelled. Money arriving after the deadline is
accepted while a seat is free (confirmed again), otherwise reported for a refund.

Lock order, the same everywhere a seat may change: the event's row, then the registration's.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import AuthRequired, InvalidInput
from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import payment_methods, policies, tasks
from ..bank_formats import reference_of
from ..choices import (
    ACTIVE_WAITLIST,
    AWAITING_TRANSFER,
    HOLDING_SEAT,
    OWED,
    BankRowState,
    EventStatus,
    NotificationKind,
    PaidVia,
    PaymentMethod,
    PaymentStatus,
    RegistrationStatus,
)
from ..errors import (
    AttendeeNotFound,
    EventNotFound,
    NotOrganiser,
    PaymentExpired,
    PaymentNotFound,
    PaymentNotPending,
    PaymentNotRefundable,
    RefundAmountInvalid,
)
from ..models import BankStatementRow, Event, Registration, WaitlistEntry
from ..selectors import staff_facts, state_version
from ..tickets import TicketTypeSpec
from .common import bump_state_version, bump_state_versions, public_event, tell_person
from .door import new_ticket
from .ledger import locked_facts, process_queue, recount_event, recount_seats

#: A reference's characters: upper case, without the look-alikes 0/O and 1/I.
REFERENCE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
REFERENCE_LENGTH = 6
#: Registrations one sweep expires at most (the next sweep takes the rest).
EXPIRY_BATCH = 500


def new_reference() -> str:
    """Six characters of REFERENCE_ALPHABET: 2³⁰ of them, unique by a constraint."""
    return "".join(secrets.choice(REFERENCE_ALPHABET) for _ in range(REFERENCE_LENGTH))


# ── at registration ──────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class PaymentStart:
    """What a new registration of a type starts with: its status, and its payment's fields."""

    status: str
    fields: dict[str, Any]

    @property
    def ticketed(self) -> bool:
        return self.status == RegistrationStatus.CONFIRMED


#: A free registration's payment fields (also what a re-activated free one is given back).
FREE = {
    "amount": 0,
    "payment_method": "",
    "payment_status": PaymentStatus.NONE,
    "payment_reference": None,
    "payment_due_at": None,
}


def payment_start(
    event: Event,
    spec: TicketTypeSpec,
    method: str | None,
    *,
    now: datetime,
    approval: bool,
) -> PaymentStart:
    """How a registration of `spec` begins: free (as ever: confirmed, or waiting for approval), or
    with the chosen method's payment (`payment_methods`: a transfer holds the seat until its
    deadline, the door confirms at once with the amount due there). A paid registration of an event
    that requires approval waits for approval first, its deadline set when it is approved. Refuses a
    method the event does not offer, and a transfer past the event's last payment time."""
    fields: dict[str, Any] = {**FREE, "ticket_type": spec.stored}
    if spec.is_free:
        status = RegistrationStatus.PENDING_APPROVAL if approval else RegistrationStatus.CONFIRMED
        return PaymentStart(status, fields)
    provider = payment_methods.choose(method, at_door=event.at_door)
    fields.update(
        amount=spec.price,
        payment_method=provider.method,
        payment_reference=new_reference() if provider.method == PaymentMethod.BANK_TRANSFER else None,
    )
    if approval:
        fields["payment_status"] = (
            PaymentStatus.AT_DOOR if provider.method == PaymentMethod.AT_DOOR else PaymentStatus.AWAITING
        )
        return PaymentStart(RegistrationStatus.PENDING_APPROVAL, fields)
    start = provider.start(amount=spec.price, last_payment_at=event.last_payment_at(), now=now)
    fields.update(payment_status=start.payment_status, payment_due_at=start.due_at)
    if start.paid_via:
        fields.update(paid_amount=spec.price, paid_at=now, paid_via=start.paid_via)
    return PaymentStart(start.status, fields)


def approved_start(registration: Registration, *, now: datetime) -> str:
    """A paid registration just approved: its payment starts now (a transfer's deadline from now).
    Sets its fields and returns its status."""
    provider = payment_methods.provider(registration.payment_method)
    event = registration.event
    start = provider.start(amount=registration.amount, last_payment_at=event.last_payment_at(), now=now)
    registration.payment_status = start.payment_status
    registration.payment_due_at = start.due_at
    if start.paid_via:
        registration.paid_amount, registration.paid_at = registration.amount, now
        registration.paid_via = start.paid_via
    return start.status


PAYMENT_FIELDS = ("payment_status", "payment_due_at", "paid_amount", "paid_at", "paid_via")


# ── confirming ───────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class PaymentResult:
    registration: Registration
    #: False: it was so already (confirming a paid one changes nothing).
    changed: bool
    #: The caller's own stateVersion (a manager's state does not change; the person's does).
    state_version: int
    #: What the change was: OK, LATE_CONFIRMED (money after the deadline, a seat was free), UNCHANGED.
    outcome_name: str = "OK"

    @property
    def event(self) -> Event:
        return self.registration.event

    @property
    def outcome(self) -> str:
        return self.outcome_name if self.changed else "UNCHANGED"


def _event_for_payments(visitor: Visitor, event_id: str, *, lock: bool) -> Event:
    """The event `event_id` (any status), locked if asked, when the visitor may handle its payments."""
    if visitor.user is None and not visitor.system:
        raise AuthRequired()
    events = Event.objects.select_for_update(no_key=True) if lock else Event.objects.all()
    event = events.filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    if not visitor.system and not policies.may_handle_payments(staff_facts(visitor.user, event)):
        raise NotOrganiser()
    return event


def _locked_registration(event: Event, attendee_id: int) -> Registration:
    registration = (
        Registration.objects.select_for_update(of=("self",))
        .select_related("user")
        .filter(pk=attendee_id, event=event)
        .first()
    )
    if registration is None:
        raise AttendeeNotFound()
    registration.event = event
    return registration


@atomic_use_case
def confirm_payment(*, visitor: Visitor, event_id: str, attendee_id: int) -> PaymentResult:
    """One of the event's managers confirms that the registration `attendee_id` is paid (the money
    came in outside the site): it is confirmed with its ticket, and the person gets the ticket e-mail.
    Under the event's row lock, then the registration's. A paid one changes nothing; money for an
    expired one is accepted while a seat is free (`PAYMENT_EXPIRED` otherwise: to refund); a
    cancelled or free one is refused (`PAYMENT_NOT_PENDING`)."""
    event = _event_for_payments(visitor, event_id, lock=True)
    registration = _locked_registration(event, attendee_id)
    if registration.payment_status == PaymentStatus.PAID:
        return PaymentResult(registration, False, state_version(visitor=visitor))
    outcome = confirm_locked(registration, via=PaidVia.ORGANISER, now=timezone.now())
    return PaymentResult(registration, True, state_version(visitor=visitor), outcome)


def confirm_locked(registration: Registration, *, via: str, now: datetime) -> str:
    """Mark `registration` paid (its full amount), its event and its row locked by the caller:
    confirmed with a ticket, the person told with the ticket e-mail. Returns OK, or LATE_CONFIRMED
    for one that had expired (a seat was free: it takes it again). Raises what cannot be confirmed."""
    outcome = "OK"
    if (
        registration.status == RegistrationStatus.EXPIRED
        and registration.payment_status == PaymentStatus.UNPAID
    ):
        if not _seat_free_for(registration, now=now):
            raise PaymentExpired()
        outcome = "LATE_CONFIRMED"
    elif not (registration.payment_status in OWED and registration.status in HOLDING_SEAT) or (
        registration.status == RegistrationStatus.PENDING_APPROVAL
    ):
        raise PaymentNotPending()
    was_confirmed = registration.status == RegistrationStatus.CONFIRMED
    registration.status = RegistrationStatus.CONFIRMED
    registration.payment_status = PaymentStatus.PAID
    registration.paid_amount, registration.paid_at, registration.paid_via = registration.amount, now, via
    fields = ["status", *PAYMENT_FIELDS, "updated_at"]
    if not (was_confirmed and registration.ticket_code):
        for name, value in new_ticket(now=now).items():
            setattr(registration, name, value)
        fields += ["ticket_code", "ticket_issued_at"]
    registration.save(update_fields=fields)
    if outcome == "LATE_CONFIRMED":
        recount_event(registration.event)
    tell_person(registration, NotificationKind.PAYMENT_CONFIRMED)
    return outcome


def _seat_free_for(registration: Registration, *, now: datetime) -> bool:
    """Late money finds a seat: the event is open, a seat is free for anyone (counted now, under the
    event's lock), and the person holds no other registration of it."""
    event = registration.event
    if event.status != EventStatus.PUBLISHED or event.has_started(now):
        return False
    if locked_facts(event).is_full:
        return False
    others = Registration.objects.filter(user=registration.user_id, event=event, status__in=HOLDING_SEAT)
    return not others.exclude(pk=registration.pk).exists()


# ── the person's report of their transfer ────────────────────────────────────────────────────


@atomic_use_case
def report_payment(*, visitor: Visitor, event_id: str, account_last5: str, paid_on: date) -> PaymentResult:
    """The person reports their transfer for `event_id` (帳號末五碼, the last five digits of the account
    they paid from, and the day they paid): their payment is being checked (查帳中) until the
    organisers confirm it. Under the registration's row lock; a second report replaces the first.
    The digits are a credential: kept for the organisers' check, never in a tool result or a log."""
    if visitor.user is None:
        raise AuthRequired()
    now = timezone.now()
    if paid_on > timezone.localdate(now):
        fields = {
            "paid_on": [{"code": "too_late", "message": "The transfer's date cannot be in the future."}]
        }
        raise InvalidInput("The transfer's date is in the future.", extra={"fields": fields})
    event = public_event(event_id)
    registration = (
        Registration.objects.select_for_update()
        .filter(user=visitor.user, event=event, amount__gt=0)
        .order_by("-updated_at", "-id")
        .first()
    )
    if registration is None:
        raise PaymentNotFound()
    registration.event = event
    if not policies.may_report_payment(payment_status=registration.payment_status) or not (
        registration.is_pending_payment
    ):
        raise PaymentNotPending()
    unchanged = (
        registration.payment_status == PaymentStatus.CHECKING
        and registration.reported_last5 == account_last5
        and registration.reported_paid_on == paid_on
    )
    if unchanged:
        return PaymentResult(registration, False, state_version(visitor=visitor))
    registration.payment_status = PaymentStatus.CHECKING
    registration.reported_last5, registration.reported_paid_on, registration.reported_at = (
        account_last5,
        paid_on,
        now,
    )
    registration.save(
        update_fields=["payment_status", "reported_last5", "reported_paid_on", "reported_at", "updated_at"]
    )
    return PaymentResult(registration, True, bump_state_version(visitor=visitor))


# ── refunds ──────────────────────────────────────────────────────────────────────────────────


@atomic_use_case
def refund_payment(
    *, visitor: Visitor, event_id: str, attendee_id: int, amount: int | None = None
) -> PaymentResult:
    """A manager records a refund of the registration `attendee_id` (the money moves outside the
    site): who, when, how much (the whole paid amount unless `amount` says less). Only for a paid
    registration that no longer holds its seat, or whose event is cancelled; once. Under the
    registration's row lock: two refunds at once record one (the second is refused)."""
    event = _event_for_payments(visitor, event_id, lock=False)
    registration = _locked_registration(event, attendee_id)
    if registration.payment_status != PaymentStatus.PAID or registration.refunded_amount:
        raise PaymentNotRefundable()
    if registration.is_active and not event.is_cancelled:
        raise PaymentNotRefundable()
    given = registration.paid_amount if amount is None else amount
    if not 1 <= given <= registration.paid_amount:
        raise RefundAmountInvalid(
            extra={"fields": {"amount": [{"code": "invalid", "message": "1 to what was paid."}]}}
        )
    registration.payment_status = PaymentStatus.REFUNDED
    registration.refunded_amount, registration.refunded_at = given, timezone.now()
    registration.refunded_by = visitor.user
    registration.save(
        update_fields=["payment_status", "refunded_amount", "refunded_at", "refunded_by", "updated_at"]
    )
    bump_state_version(visitor=Visitor(user=registration.user))
    return PaymentResult(registration, True, state_version(visitor=visitor))


# ── the sweep: payments not made in time ─────────────────────────────────────────────────────


@dataclass(frozen=True)
class ExpiryResult:
    expired: list[Registration]
    offers: int  # seats the freed ones offered to the waiting lists
    state_version: int = 0

    @property
    def event(self) -> None:
        return None

    @property
    def recorded(self) -> list[int]:
        """One Activity row per expired registration, each with its event (`events.actions.perform`)."""
        return [registration.event_id for registration in self.expired]

    @property
    def outcome(self) -> str:
        return "OK" if self.expired else "UNCHANGED"


@atomic_use_case
def expire_payments(
    *, visitor: Visitor, now: datetime | None = None, limit: int = EXPIRY_BATCH
) -> ExpiryResult:
    """The sweep (a declared system actor, or a superuser): every registration still waiting for a
    transfer after its deadline is expired, its seat freed (offered to the first person waiting, by
    the waiting list's rules) and its person told by e-mail (one queued task for the batch).

    A batch is a fixed number of statements whatever its size: the events' row locks (in key order,
    as every other change takes them), the registrations read again under them, one UPDATE, one
    recount, one upsert of the people's stateVersions, one task; only an event with people waiting
    adds its queue's statements. A confirmation racing the sweep waits for the event's lock and finds
    the registration expired, or the sweep finds it paid: one outcome."""
    if not visitor.system and not (visitor.user is not None and visitor.user.is_superuser):
        raise NotOrganiser()
    now = now or timezone.now()
    due = Registration.objects.filter(
        status=RegistrationStatus.PENDING_PAYMENT,
        payment_status__in=AWAITING_TRANSFER,
        payment_due_at__lte=now,
    )
    event_pks = sorted(set(due.order_by("payment_due_at").values_list("event_id", flat=True)[:limit]))
    if not event_pks:
        return ExpiryResult(expired=[], offers=0)
    events = {
        e.pk: e for e in Event.objects.select_for_update(no_key=True).filter(pk__in=event_pks).order_by("pk")
    }
    expired = list(
        due.filter(event_id__in=event_pks)
        .select_for_update(of=("self",))
        .select_related("user")
        .order_by("pk")[:limit]
    )
    if not expired:
        return ExpiryResult(expired=[], offers=0)
    Registration.objects.filter(pk__in=[r.pk for r in expired]).update(
        status=RegistrationStatus.EXPIRED, payment_status=PaymentStatus.UNPAID, updated_at=now
    )
    for registration in expired:
        registration.status, registration.payment_status = RegistrationStatus.EXPIRED, PaymentStatus.UNPAID
        registration.event = events[registration.event_id]
    touched = sorted({r.event_id for r in expired})
    waiting = set(
        WaitlistEntry.objects.filter(event_id__in=touched, status__in=ACTIVE_WAITLIST)
        .values_list("event_id", flat=True)
        .distinct()
    )
    offers = sum(len(process_queue(events[pk], now=now, recount=False)) for pk in touched if pk in waiting)
    recount_seats(Event.objects.filter(pk__in=touched))
    bump_state_versions(keys=[Visitor(user=r.user).key for r in expired])
    tasks.tell_expired_payments.enqueue([r.pk for r in expired])
    return ExpiryResult(expired=expired, offers=offers)


# ── the bank statement, one row at a time ────────────────────────────────────────────────────


@dataclass(frozen=True)
class BankRowResult:
    row: BankStatementRow
    #: False: the row was imported before (its checksum); nothing changed.
    applied: bool
    state_version: int = 0

    @property
    def event(self) -> Event | None:
        return self.row.event

    @property
    def state(self) -> str:
        return self.row.state

    @property
    def outcome(self) -> str:
        return self.row.state.upper() if self.applied else "ALREADY_IMPORTED"


@dataclass
class _Decision:
    state: str
    registration: Registration | None = None
    problem: str = ""
    confirm: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@atomic_use_case
def apply_bank_row(
    *,
    visitor: Visitor,
    checksum: str,
    line: int = 0,
    booked_on: date | None = None,
    amount: int | None = None,
    reference: str = "",
    payer: str = "",
    account_last5: str = "",
    problem: str | None = None,
    source: str = "",
    event_id: str | None = None,
) -> BankRowResult:
    """Apply one row of a bank statement (read by `events.bank_statements.read_statement`): matched to
    a registration by its reference (case and spaces do not matter; the event's code before it may be
    there or not), else by the account digits the person reported plus the amount; then, under the
    event's and the registration's row locks, the payment is confirmed through `confirm_locked` (the
    confirm row's own transition) when the amount is exactly what is due. Every row ends in a state
    the organisers see (`BankRowState`): a partial amount or an overpayment is reported, not confirmed;
    money after the deadline is confirmed again while a seat is free, else reported for a refund.

    Once per row, whatever the number of imports: the row's checksum is unique, and it is inserted in
    the transaction that applies it, so a second import of the same row (at once or later) finds it
    and changes nothing (`ALREADY_IMPORTED`). A row imported before is looked up by its checksum
    first, before anything is matched or locked: importing a statement again costs one read per row
    (a second import racing the first is still caught by the constraint). `event_id` limits the
    matching to one event (the managers of an event import its statement; a statement of every event
    is the operator's, the declared system actor's, or a superuser's)."""
    scope = _bank_scope(visitor, event_id)
    imported = BankStatementRow.objects.select_related("event").filter(checksum=checksum).first()
    if imported is not None:
        return BankRowResult(imported, applied=False)
    now = timezone.now()
    decision = _decide(
        scope,
        amount=amount,
        reference=reference,
        account_last5=account_last5,
        problem=problem,
        booked_on=booked_on,
        now=now,
    )
    registration = decision.registration
    row = BankStatementRow(
        checksum=checksum,
        event=registration.event if registration is not None else scope,
        registration=registration,
        source=source[:200],
        line=line,
        booked_on=booked_on,
        amount=amount,
        reference=reference[:200],
        payer=payer[:200],
        account_last5=account_last5[:5],
        state=decision.state,
        problem=(decision.problem or problem or "")[:200],
        imported_at=now,
        imported_by=visitor.user,
    )
    try:
        with transaction.atomic():  # a savepoint: the row imported by another call first is theirs
            row.save(force_insert=True)
    except IntegrityError:
        existing = BankStatementRow.objects.select_related("event").get(checksum=checksum)
        return BankRowResult(existing, applied=False)
    if decision.confirm and registration is not None:
        confirm_locked(registration, via=PaidVia.BANK_STATEMENT, now=now)
    return BankRowResult(row, applied=True)


def _bank_scope(visitor: Visitor, event_id: str | None) -> Event | None:
    """The event the statement is for (its managers may apply it), or None: every event (the system
    actor, a superuser)."""
    if event_id:
        return _event_for_payments(visitor, event_id, lock=False)
    if visitor.system or (visitor.user is not None and visitor.user.is_superuser):
        return None
    if visitor.user is None:
        raise AuthRequired()
    raise NotOrganiser("Name the event whose statement this is: its managers apply it.")


def _decide(
    scope: Event | None,
    *,
    amount: int | None,
    reference: str,
    account_last5: str,
    problem: str | None,
    booked_on: date | None,
    now: datetime,
) -> _Decision:
    """What the row comes to. A matched registration is read again under its event's and its own
    row locks, so what is decided is what holds until the commit."""
    if problem or amount is None or amount <= 0:
        return _Decision(BankRowState.INVALID, problem=problem or "no positive amount")
    pk = _match(scope, reference=reference, account_last5=account_last5, amount=amount)
    if pk is None:
        return _Decision(BankRowState.NO_MATCH)
    event_pk = Registration.objects.filter(pk=pk).values_list("event_id", flat=True).get()
    event = Event.objects.select_for_update(no_key=True).get(pk=event_pk)
    registration = _locked_registration(event, pk)
    status, paid = registration.status, registration.payment_status
    if paid in (PaymentStatus.PAID, PaymentStatus.REFUNDED):
        return _Decision(BankRowState.ALREADY_PAID, registration)
    if amount < registration.amount:
        return _Decision(BankRowState.PARTIAL, registration, problem=f"{registration.amount - amount} short")
    if amount > registration.amount:
        return _Decision(BankRowState.OVERPAID, registration, problem=f"{amount - registration.amount} over")
    if status == RegistrationStatus.EXPIRED and paid == PaymentStatus.UNPAID:
        if _seat_free_for(registration, now=now):
            return _Decision(BankRowState.LATE_CONFIRMED, registration, confirm=True)
        return _Decision(BankRowState.LATE, registration)
    if status in (RegistrationStatus.CANCELLED, RegistrationStatus.DECLINED) or paid == PaymentStatus.UNPAID:
        return _Decision(BankRowState.CANCELLED, registration)
    if paid in OWED and status in (RegistrationStatus.PENDING_PAYMENT, RegistrationStatus.CONFIRMED):
        return _Decision(BankRowState.MATCHED, registration, confirm=True)
    return _Decision(BankRowState.NO_MATCH, registration, problem="waiting for approval")


def _match(scope: Event | None, *, reference: str, account_last5: str, amount: int) -> int | None:
    """The registration a row pays: the one whose reference is in the row's reference (one), else the
    one whose person reported these account digits and owes this amount (exactly one)."""
    registrations = Registration.objects.exclude(amount=0)
    if scope is not None:
        registrations = registrations.filter(event=scope)
    candidates = reference_candidates(reference)
    if candidates:
        found = list(
            registrations.filter(payment_reference__in=candidates)
            .select_related("event")
            .values_list("pk", "payment_reference", "event__payment_code", "event__public_id")
        )
        if len(found) > 1:  # tell them apart by the event's code printed before the reference
            text = normalise_reference(reference)
            found = [row for row in found if _code_of(row[2], row[3]) + (row[1] or "") in text] or found
        if len(found) == 1:
            return found[0][0]
    if re.fullmatch(r"[0-9]{5}", account_last5 or ""):
        reported = list(
            registrations.filter(
                Q(payment_status__in=AWAITING_TRANSFER) | Q(status=RegistrationStatus.EXPIRED),
                reported_last5=account_last5,
                amount=amount,
            ).values_list("pk", flat=True)[:2]
        )
        if len(reported) == 1:
            return reported[0]
    return None


def normalise_reference(text: str) -> str:
    """A reference as people and banks write it, compared: the statement reader's one normalisation
    (`bank_formats.reference_of`: half-width, no spaces, upper case), then letters and digits only
    (a dash, a slash or a colon around it does not matter)."""
    return re.sub(r"[^A-Z0-9]", "", reference_of(text or ""))


def reference_candidates(text: str) -> list[str]:
    """Every run of REFERENCE_LENGTH reference characters in the row's text (a short text: a few
    hundred at most, looked up in one statement)."""
    normalised = normalise_reference(text)
    allowed = set(REFERENCE_ALPHABET)
    found = {
        normalised[i : i + REFERENCE_LENGTH]
        for i in range(len(normalised) - REFERENCE_LENGTH + 1)
        if set(normalised[i : i + REFERENCE_LENGTH]) <= allowed
    }
    return sorted(found)


def _code_of(payment_code: str, public_id: str) -> str:
    return Event(payment_code=payment_code, public_id=public_id).reference_code


def owed_at_door(registrations: Iterable[Registration]) -> int:
    """What the registrations still owe (TWD): the door's count of money to take."""
    return sum(r.amount for r in registrations if r.owes)
