"""Approval: an event that requires it (`Event.requires_approval`) takes registrations that wait
(`pending_approval`, holding their seat, without a ticket) until one of its managers approves or
declines each. Either way the person is told by e-mail (through the outbox) and their stateVersion
rises; a decline frees the seat, which goes to the first person waiting (the seat ledger's rules)."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils import timezone

from core.errors import AuthRequired, PermissionDenied
from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import policies
from ..choices import OWED, NotificationKind, PaymentStatus, RegistrationStatus
from ..errors import NotPendingApproval, RegistrationNotFound
from ..models import Event, Registration
from ..selectors import staff_facts, state_version
from .common import tell_person
from .door import new_ticket
from .ledger import anyone_waiting, seats_changed
from .payments import PAYMENT_FIELDS, approved_start

#: What an approval leads to: confirmed, or (a paid type paid by transfer) waiting for the payment.
APPROVED = (RegistrationStatus.CONFIRMED, RegistrationStatus.PENDING_PAYMENT)


@dataclass(frozen=True)
class DecisionResult:
    registration: Registration
    #: False: it had this decision already (approving an approved one changes nothing).
    changed: bool
    #: The deciding manager's own stateVersion (their state does not change; the person's does).
    state_version: int

    @property
    def event(self) -> Event:
        return self.registration.event

    @property
    def outcome(self) -> str:
        return "OK" if self.changed else "UNCHANGED"


@atomic_use_case
def approve_registration(*, visitor: Visitor, registration_id: int) -> DecisionResult:
    """A manager approves a registration waiting for approval: it is confirmed, with a ticket, and the
    person is told. Under the event's row lock. An approved one changes nothing; a declined or
    cancelled one is refused (`NotPendingApproval`)."""
    registration = _decided(visitor, registration_id, done=APPROVED)
    if registration.status in APPROVED:
        return _result(visitor, registration, changed=False)
    now = timezone.now()
    fields = ["status", "updated_at"]
    if registration.amount:  # a paid type: its payment starts now (a transfer's deadline from now)
        registration.status = approved_start(registration, now=now)
        fields += PAYMENT_FIELDS
    else:
        registration.status = RegistrationStatus.CONFIRMED
    if registration.status == RegistrationStatus.CONFIRMED:
        ticket = new_ticket(now=now)
        for field, value in ticket.items():
            setattr(registration, field, value)
        fields += list(ticket)
    registration.save(update_fields=fields)
    pending = registration.status == RegistrationStatus.PENDING_PAYMENT
    kind = NotificationKind.PAYMENT_DUE if pending else NotificationKind.REGISTRATION_APPROVED
    tell_person(registration, kind)
    return _result(visitor, registration, changed=True)


@atomic_use_case
def decline_registration(*, visitor: Visitor, registration_id: int) -> DecisionResult:
    """A manager declines a registration waiting for approval: its seat is freed (offered to the first
    person waiting, `seats_taken` recounted) and the person is told. Under the event's row lock. A
    declined one changes nothing; an approved or cancelled one is refused (`NotPendingApproval`)."""
    registration = _decided(visitor, registration_id, done=RegistrationStatus.DECLINED)
    if registration.status == RegistrationStatus.DECLINED:
        return _result(visitor, registration, changed=False)
    registration.status = RegistrationStatus.DECLINED
    if registration.payment_status in OWED:
        registration.payment_status = PaymentStatus.UNPAID
    registration.save(update_fields=["status", "payment_status", "updated_at"])
    waiting = getattr(registration, "anyone_waiting", None)  # annotated by _decided
    seats_changed(registration.event, now=timezone.now(), anyone_waiting=waiting)
    tell_person(registration, NotificationKind.REGISTRATION_DECLINED)
    return _result(visitor, registration, changed=True)


def _result(visitor: Visitor, registration: Registration, *, changed: bool) -> DecisionResult:
    return DecisionResult(
        registration=registration, changed=changed, state_version=state_version(visitor=visitor)
    )


def _decided(visitor: Visitor, registration_id: int, *, done: str | tuple[str, ...]) -> Registration:
    """The registration, its event locked, if the visitor manages the event and it waits for a
    decision (or already has `done`)."""
    if visitor.user is None:
        raise AuthRequired()
    event_pk = Registration.objects.filter(pk=registration_id).values_list("event_id", flat=True).first()
    if event_pk is None:
        raise RegistrationNotFound("No registration has this id.")
    event = Event.objects.select_for_update(no_key=True).get(pk=event_pk)
    if not policies.may_decide_approval(staff_facts(visitor.user, event)):
        raise PermissionDenied()
    registration = (
        Registration.objects.select_related("user")
        .annotate(anyone_waiting=anyone_waiting("event"))
        .get(pk=registration_id)
    )
    registration.event = event
    if registration.status not in (
        RegistrationStatus.PENDING_APPROVAL,
        *((done,) if isinstance(done, str) else done),
    ):
        raise NotPendingApproval()
    return registration
