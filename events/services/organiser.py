"""The organisers' actions (the admin): publish, unpublish and cancel events, cancel a person's
registration, offer the seats a change freed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from core.errors import InvalidInput
from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import policies
from ..choices import (
    ACTIVE_WAITLIST,
    HOLDING_SEAT,
    OWED,
    EventStatus,
    NotificationKind,
    NotificationStatus,
    PaymentStatus,
    RegistrationStatus,
    WaitlistStatus,
)
from ..errors import EventNotFound, NotOrganiser, RegistrationNotFound
from ..mail import outbox
from ..models import Event, Notification, Registration, WaitlistEntry
from ..selectors import staff_facts
from .common import bump_state_version
from .ledger import anyone_waiting, process_queue, recount_event, seats_changed
from .registrations import CancelResult, cancel_locked


@atomic_use_case
def cancel_attendee_registration(*, visitor: Visitor, registration_id: int) -> CancelResult:
    """An organiser cancels a person's registration (the admin): as when the person cancels, under the
    event's row lock, the freed seat goes to the first person waiting, and the holder's stateVersion
    rises. Cancelling a cancelled one changes nothing. Only an organiser (who may change registrations)
    may; the rule of when a registration can be cancelled is the person's too (`policies.may_cancel`)."""
    if visitor.user is None:
        raise NotOrganiser()
    event_pk = Registration.objects.filter(pk=registration_id).values_list("event_id", flat=True).first()
    if event_pk is None:
        raise RegistrationNotFound("No registration has this id.")
    event = Event.objects.select_for_update(no_key=True).get(pk=event_pk)
    _may_manage(visitor, event)
    registration = (
        Registration.objects.select_related("user")
        .annotate(anyone_waiting=anyone_waiting("event"))
        .get(pk=registration_id)
    )
    registration.event = event
    holder = Visitor(user=registration.user)
    return cancel_locked(registration, holder=holder, anyone_waiting=registration.anyone_waiting)


@dataclass(frozen=True)
class EventStatusResult:
    event: Event
    changed: bool  # False: the event already had that status (a no-op, recorded as UNCHANGED)
    cancelled_registrations: int = 0
    closed_waitlist_entries: int = 0

    @property
    def outcome(self) -> str:
        return "OK" if self.changed else "UNCHANGED"


@atomic_use_case
def publish_event(*, visitor: Visitor, event_id: str) -> EventStatusResult:
    """An organiser publishes a draft (or cancelled) event: it becomes public and open."""
    return _set_status(visitor, event_id, EventStatus.PUBLISHED)


@atomic_use_case
def unpublish_event(*, visitor: Visitor, event_id: str) -> EventStatusResult:
    """An organiser takes an event back to draft: it leaves the catalogue; registrations are kept."""
    return _set_status(visitor, event_id, EventStatus.DRAFT)


@atomic_use_case
def cancel_event(*, visitor: Visitor, event_id: str) -> EventStatusResult:
    """An organiser cancels an event: every confirmed registration and every waiting-list entry ends
    with it, each person's stateVersion rises, and each is told by e-mail. The event stays visible,
    saying so."""
    result = _set_status(visitor, event_id, EventStatus.CANCELLED)
    if not result.changed:
        return result
    event, now = result.event, timezone.now()
    registrations = list(
        Registration.objects.select_related("user").filter(event=event, status__in=HOLDING_SEAT)
    )
    entries = list(
        WaitlistEntry.objects.select_related("user").filter(event=event, status__in=ACTIVE_WAITLIST)
    )
    Registration.objects.filter(pk__in=[r.pk for r in registrations]).update(
        status=RegistrationStatus.CANCELLED, updated_at=now
    )
    # Nothing paid is owed any more; what was paid is to be refunded (each by `refund_payment`).
    Registration.objects.filter(pk__in=[r.pk for r in registrations], payment_status__in=OWED).update(
        payment_status=PaymentStatus.UNPAID
    )
    WaitlistEntry.objects.filter(pk__in=[e.pk for e in entries]).update(
        status=WaitlistStatus.CLOSED, ended_at=now
    )
    recount_event(event)
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
    """Lock the event and give it `status`; only its managers and the superusers may."""
    event = _managed_event(visitor, event_id)
    if event.status == status:
        return EventStatusResult(event=event, changed=False)
    event.status = status
    event.save(update_fields=["status", "updated_at"])
    if status == EventStatus.PUBLISHED:  # seats freed while it was not public go to the people waiting
        seats_changed(event, now=timezone.now())
    return EventStatusResult(event=event, changed=True)


@dataclass(frozen=True)
class OfferResult:
    event: Event
    offered: int  # seats offered to the waiting list by this call
    expired: int = 0  # offers whose time was up, ended by this call

    @property
    def outcome(self) -> str:
        return "OK" if self.offered or self.expired else "UNCHANGED"


@atomic_use_case
def offer_free_seats(*, visitor: Visitor, event_id: str, now: datetime | None = None) -> OfferResult:
    """Under the event's row lock, expired offers end and every free seat goes to the next people
    waiting, each told by e-mail. An organiser does it after changing the event (more seats, longer
    offers): its managers, the superusers. The worker does it as the declared system actor
    (`core.visitors.SYSTEM`): when an offer's time is up and in its periodic sweep (`events.tasks`;
    `now` is the worker's clock). An event nobody waits for changes nothing."""
    event = _system_event(event_id) if visitor.system else _managed_event(visitor, event_id)
    now = now or timezone.now()
    expired = WaitlistEntry.objects.filter(
        event=event, status=WaitlistStatus.OFFERED, expires_at__lte=now
    ).count()
    return OfferResult(event=event, offered=len(process_queue(event, now=now)), expired=expired)


#: What the admin's event form may set: every field but the record's times. The id and the status
#: only when the event is created (then the status changes only through publish, unpublish, cancel).
EVENT_FIELDS = frozenset(
    {
        "public_id",
        "title",
        "summary",
        "description",
        "status",
        "starts_at",
        "ends_at",
        "location",
        "venue",
        "price",
        "price_amount",
        "currency",
        "level",
        "capacity",
        "offer_hours",
        "requires_approval",
        "answers_close_at",
        "payment_code",
        "payment_closes_at",
        "at_door",
        "pending_may_pay_at_door",
    }
)
SET_ONCE = frozenset({"public_id", "status"})


@dataclass(frozen=True)
class EventEditResult:
    event: Event
    created: bool


@atomic_use_case
def edit_event(*, visitor: Visitor, changes: dict[str, Any], event_pk: int | None = None) -> EventEditResult:
    """The admin's event form: create an event (`event_pk` None: the superusers, who may add events)
    or change one the visitor manages, under its row lock, with the fields the form changed. The model's
    own validation runs again here (`full_clean`). The seats a change frees are offered by
    `offer_free_seats`, which the form performs next."""
    unknown = set(changes) - EVENT_FIELDS
    if event_pk is not None:
        unknown |= set(changes) & SET_ONCE
    if unknown:
        fields = {name: ["This field is not changed here."] for name in sorted(unknown)}
        raise InvalidInput("Some fields cannot be changed here.", extra={"fields": fields})
    if event_pk is None:
        if visitor.user is None or not policies.may_manage_event(
            policies.StaffFacts(superuser=visitor.user.is_superuser)
        ):
            raise NotOrganiser()
        event = Event(**changes)
    else:
        event = _managed_event(visitor, pk=event_pk)
        for name, value in changes.items():
            setattr(event, name, value)
    # A change validates what it changes (as the admin's form does): an id made before the id rule stays.
    unchanged = None if event_pk is None else [f.name for f in Event._meta.fields if f.name not in changes]
    try:
        event.full_clean(exclude=unchanged)
    except ValidationError as error:
        raise InvalidInput("The event is not valid.", extra={"fields": error.message_dict}) from error
    event.save()
    return EventEditResult(event=event, created=event_pk is None)


@dataclass(frozen=True)
class ResendNotificationResult:
    notification: Notification
    queued: bool

    @property
    def event(self) -> Event | None:
        return self.notification.event

    @property
    def outcome(self) -> str:
        return "OK" if self.queued else "NOT_FAILED"


@atomic_use_case
def resend_notification(*, visitor: Visitor, notification_id: int) -> ResendNotificationResult:
    """The admin's "send again": a failed e-mail gets a fresh series of attempts (an organiser's choice,
    after fixing the mail server); one that did not fail changes nothing. For whoever may change the
    outbox's rows (the admin's permission)."""
    if visitor.user is None or not visitor.user.has_perm("events.change_notification"):
        raise NotOrganiser()
    notification = Notification.objects.select_related("event").filter(pk=notification_id).first()
    if notification is None:
        raise InvalidInput(
            "No e-mail has this id.", extra={"fields": {"notification_id": ["No such e-mail."]}}
        )
    queued = outbox.send_again(
        Notification.objects.filter(pk=notification.pk, status=NotificationStatus.FAILED)
    )
    return ResendNotificationResult(notification=notification, queued=bool(queued))


def _may_manage(visitor: Visitor, event: Event) -> None:
    """Refuse unless the visitor manages `event` (`policies.may_manage_event`)."""
    if visitor.user is None or not policies.may_manage_event(staff_facts(visitor.user, event)):
        raise NotOrganiser()


def _system_event(event_id: str) -> Event:
    """The event of `event_id`, locked for the transaction, for the site's own work on it."""
    event = Event.objects.select_for_update(no_key=True).filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    return event


def _managed_event(visitor: Visitor, event_id: str | None = None, *, pk: int | None = None) -> Event:
    """The event of `event_id` (or of the key `pk`), locked for the transaction, if the visitor manages it."""
    if visitor.user is None:
        raise NotOrganiser()
    lookup = {"public_id": event_id} if pk is None else {"pk": pk}
    event = Event.objects.select_for_update(no_key=True).filter(**lookup).first()
    if event is None:
        raise EventNotFound()
    _may_manage(visitor, event)
    return event
