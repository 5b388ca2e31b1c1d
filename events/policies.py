"""Every "may I?" of the domain, decided once, as pure functions over plain facts (layer 1).

A use case evaluates a policy under its row lock and raises the refusal; a page shows a button, a tool
is offered and a serializer says `registrationOpen` by reading the same function on facts read for the
page. Nothing else decides whether an event is full, open, or may be cancelled. The functions take no
database access and no clock of their own (`now` is given), so a table of cases tests every branch
(`tests/events/test_policies.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from core.errors import AuthRequired, DomainError

from .choices import AWAITING_TRANSFER, EventStatus, StaffRole
from .errors import (
    AlreadyRegistered,
    EventCancelled,
    EventFull,
    EventNotFound,
    NotEventStaff,
    NotOrganiser,
    RegistrationClosed,
    RegistrationNotFound,
    SeatsAvailable,
    UndoTooLate,
    WaitlistClosed,
)

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

    from .models import Event


@dataclass(frozen=True)
class EventFacts:
    """What the policies need to know about an event, read once (in the use case: under its lock)."""

    status: str
    starts_at: datetime
    capacity: int | None
    confirmed: int | None = None  # confirmed registrations; None when the question needs no count
    held: int = 0  # seats held by pending waiting-list offers

    @classmethod
    def of(cls, event: Event, *, confirmed: int | None = None, held: int | None = None) -> EventFacts:
        """The one way to make an event's facts: its seats as given (counted under its lock), else as
        `EventQuerySet.with_seats()` annotated them, else not counted (`confirmed` None)."""
        if confirmed is None:
            confirmed = getattr(event, "confirmed_count", None)
        if held is None:
            held = getattr(event, "held_count", None) or 0
        return cls(
            status=event.status,
            starts_at=event.starts_at,
            capacity=event.capacity,
            confirmed=confirmed,
            held=held,
        )

    @property
    def seats_left(self) -> int | None:
        """Seats nobody has and nobody is offered; None when the event has no seat limit."""
        if self.capacity is None:
            return None
        if self.confirmed is None:
            raise ValueError("Seats were asked about facts read without the confirmed count.")
        return max(0, self.capacity - self.confirmed - self.held)

    @property
    def last_offer_at(self) -> datetime:
        """After this moment no seat is offered from the waiting list: freed seats are open to anyone."""
        return self.starts_at - offers_stop_before_start()

    @property
    def is_full(self) -> bool:
        return self.seats_left == 0

    def has_started(self, now: datetime) -> bool:
        return self.starts_at <= now


@dataclass(frozen=True)
class VisitorFacts:
    """What the policies need to know about the visitor, for one event."""

    signed_in: bool
    has_session: bool = True  # saving needs somewhere to keep the save
    registered: bool = False  # holds an active registration for this event
    waiting: bool = False  # has an active waiting-list entry (waiting or offered)
    holds_offer: bool = False  # a seat is held for them by a pending offer


@dataclass(frozen=True)
class Answer:
    """Allowed, or refused with the domain error that says why (and what to do next)."""

    refusal: DomainError | None = None

    @property
    def allowed(self) -> bool:
        return self.refusal is None

    def __bool__(self) -> bool:
        return self.allowed

    def enforce(self) -> None:
        """Raise the refusal, if any: what a use case does with the answer."""
        if self.refusal is not None:
            raise self.refusal


ALLOWED = Answer()


def _visible(event: EventFacts) -> Answer:
    """A cancelled event is still shown (and says so); a draft is not public at all."""
    if event.status == EventStatus.CANCELLED:
        return Answer(EventCancelled())
    if event.status != EventStatus.PUBLISHED:
        return Answer(EventNotFound())
    return ALLOWED


def offers_stop_before_start() -> timedelta:
    """How long before the start the waiting list stops offering seats (WAITLIST_OFFERS_STOP_HOURS)."""
    return timedelta(hours=settings.WAITLIST_OFFERS_STOP_HOURS)


def may_register(event: EventFacts, visitor: VisitorFacts, *, now: datetime) -> Answer:
    """A new registration: a signed-in person, a published event that has not started, a seat that
    is free or held for them by an offer (a seat held for someone else is not free).

    Someone already registered is allowed: registering again answers `alreadyRegistered`.
    """
    if not visitor.signed_in:
        return Answer(AuthRequired())
    if visitor.registered:
        return ALLOWED
    if not (answer := _visible(event)):
        return answer
    if event.has_started(now):
        return Answer(RegistrationClosed())
    if event.is_full and not visitor.holds_offer:
        return Answer(EventFull())
    return ALLOWED


def may_join_waitlist(event: EventFacts, visitor: VisitorFacts, *, now: datetime) -> Answer:
    """Joining the waiting list: a signed-in person without a seat, a published event that is full
    and far enough from its start for offers to be made. Joining again is allowed (idempotent)."""
    if not visitor.signed_in:
        return Answer(AuthRequired("Sign in to join the waiting list."))
    if visitor.registered:
        return Answer(AlreadyRegistered())
    if visitor.waiting:
        return ALLOWED
    if not (answer := _visible(event)):
        return answer
    if event.has_started(now):
        return Answer(RegistrationClosed())
    if now >= event.last_offer_at:
        return Answer(WaitlistClosed())
    if not event.is_full:
        return Answer(SeatsAvailable())
    return ALLOWED


def may_offer(event: EventFacts, *, now: datetime) -> bool:
    """Whether a freed seat goes to the next waiting person (else it is open to anyone)."""
    return event.status == EventStatus.PUBLISHED and now < event.last_offer_at


def may_cancel(event: EventFacts, visitor: VisitorFacts, *, now: datetime) -> Answer:
    """Cancelling an active registration, until the event starts (a cancelled event's too: the
    person may tidy up their list)."""
    if not visitor.signed_in:
        return Answer(AuthRequired())
    if not visitor.registered:
        return Answer(RegistrationNotFound())
    if event.has_started(now):
        return Answer(
            RegistrationClosed("The event has started; its registrations can no longer be cancelled.")
        )
    return ALLOWED


def may_save(event: EventFacts, visitor: VisitorFacts) -> Answer:
    """Saving a published event, for anyone with a session or an account."""
    if not visitor.has_session:
        return Answer(AuthRequired("Saving needs a session; enable cookies or sign in."))
    return _visible(event)


def may_change_answers(event: EventFacts, *, closes_at: datetime | None, now: datetime) -> bool:
    """A person may change their answers until the event starts, or until the earlier time its
    organisers closed changes at (`closes_at`)."""
    if event.has_started(now):
        return False
    return closes_at is None or now < closes_at


def may_decide_approval(staff: StaffFacts) -> Answer:
    """Approve or decline a registration waiting for approval: the event's managers (and superusers)."""
    return may_manage_event(staff)


def may_handle_payments(staff: StaffFacts, *, system: bool = False) -> Answer:
    """Confirm a payment, record a refund, apply a bank statement's rows: the event's managers, the
    superusers, and the site's declared system actor (the statement import and the payment sweep
    that its operator runs). Never the payer: nobody confirms their own payment."""
    if system:
        return ALLOWED
    return may_manage_event(staff)


def may_report_payment(*, payment_status: str) -> bool:
    """A person may report their transfer (last five digits and date) while it is awaited or being
    checked; a second report replaces the first."""
    return payment_status in AWAITING_TRANSFER


@dataclass(frozen=True)
class Permissions:
    """What a page may offer one visitor for one event: its buttons and its tools."""

    register: (
        bool  # a signed-in person not yet registered (holding the visitor's offer, if any) would be accepted
    )
    cancel: bool
    save: bool
    join_waitlist: bool  # a signed-in person not yet waiting would be accepted
    leave_waitlist: bool  # the visitor is on the waiting list (leaving with an offer declines it)


def permissions(event: EventFacts, visitor: VisitorFacts, *, now: datetime) -> Permissions:
    newcomer = VisitorFacts(signed_in=True, holds_offer=visitor.holds_offer)
    return Permissions(
        register=may_register(event, newcomer, now=now).allowed,
        cancel=may_cancel(event, visitor, now=now).allowed,
        save=may_save(event, VisitorFacts(signed_in=visitor.signed_in)).allowed,  # a visit opens a session
        join_waitlist=not visitor.registered
        and not visitor.waiting
        and may_join_waitlist(event, VisitorFacts(signed_in=True), now=now).allowed,
        leave_waitlist=visitor.signed_in and visitor.waiting,
    )


# ── who runs an event ─────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class StaffFacts:
    """A person's part in one event: a superuser runs every event; otherwise their role, or None."""

    superuser: bool = False
    role: str | None = None


def may_manage_event(staff: StaffFacts) -> Answer:
    """Edit the event, see and export its attendees, publish, unpublish, cancel it, cancel a person's
    registration, offer freed seats: its managers and the superusers."""
    if staff.superuser or staff.role == StaffRole.MANAGER:
        return ALLOWED
    return Answer(NotEventStaff())


def may_change_team(staff: StaffFacts) -> Answer:
    """Put people on an event's team or take them off it: the superusers (and the site's operator,
    through `manage.py add_event_staff`, who acts as one)."""
    if staff.superuser:
        return ALLOWED
    return Answer(NotOrganiser())


def may_check_in(staff: StaffFacts) -> Answer:
    """Check people in and find them at the door: door staff, managers and the superusers."""
    if staff.superuser or staff.role in (StaffRole.MANAGER, StaffRole.DOOR):
        return ALLOWED
    return Answer(NotEventStaff())


def undo_window() -> timedelta:
    """How long a check-in may be undone at the door (CHECK_IN_UNDO_MINUTES)."""
    return timedelta(minutes=settings.CHECK_IN_UNDO_MINUTES)


def may_undo_check_in(
    staff: StaffFacts, *, by_same_person: bool, checked_in_at: datetime, now: datetime
) -> Answer:
    """Within the undo window, the staff member who let the person in, or a manager, may undo it."""
    if not may_check_in(staff):
        return Answer(NotEventStaff())
    if now - checked_in_at > undo_window():
        return Answer(UndoTooLate())
    if by_same_person or may_manage_event(staff):
        return ALLOWED
    return Answer(UndoTooLate())


def scan_time_in_future(scanned_at: datetime | None, *, now: datetime) -> bool:
    """A device clock ahead of the server's (beyond a minute of drift): flagged, never refused."""
    return scanned_at is not None and scanned_at - now > timedelta(minutes=1)


# ── An event's registration questions, once people have answered ────────────────────────────────


def question_change_refusal(*, answered: bool, kind_changed: bool, deleted: bool) -> StrOrPromise | None:
    """Why a change to a question is refused, or None. Once anyone has answered it, its kind stays and
    it stays (their answers keep their meaning; a new question asks something new). The one rule the
    admin's question forms and the model's validation ask (`Question.change_refusal`)."""
    if not answered:
        return None
    if deleted:
        return _(
            "People have answered “%(question)s”: it cannot be deleted (their answers would lose "
            "their question)."
        )
    if kind_changed:
        return _("People have answered this question, so its kind cannot change: add a new question.")
    return None


def option_deletion_refusal(*, chosen: bool) -> StrOrPromise | None:
    """Why an option cannot be deleted, or None: once someone chose it, it is hidden instead (the
    answers that chose it keep their meaning). Asked by `QuestionOption.deletion_refusal`."""
    if chosen:
        return _("Someone chose “%(option)s”: it cannot be deleted, only hidden (tick “hidden”).")
    return None
