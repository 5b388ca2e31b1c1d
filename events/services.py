"""Write use cases (layer 2). Each runs in one transaction, is idempotent, and records one Activity.

Refusals are typed errors from `errors.py`; `stateVersion` rises exactly once per real change and
never on a no-op.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from . import emails, policies
from .activity import records_activity
from .choices import EventStatus, Mode, RegistrationStatus
from .errors import AuthRequired, EventNotFound, PermissionDenied, RegistrationNotFound
from .models import Event, Registration, SavedEvent, VisitorState
from .selectors import saved_owner, state_version
from .visitors import Visitor


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


@records_activity
@transaction.atomic
def save_event(*, visitor: Visitor, mode: Mode, event_id: str) -> SaveResult:
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


@records_activity
@transaction.atomic
def unsave_event(*, visitor: Visitor, mode: Mode, event_id: str) -> UnsaveResult:
    """Remove a save. Removing what is not saved changes nothing and is not an error."""
    event = _public_event(event_id)
    owner = saved_owner(visitor)
    deleted = SavedEvent.objects.filter(event=event, **owner).delete()[0] if owner else 0
    version = bump_state_version(visitor=visitor) if deleted else state_version(visitor=visitor)
    return UnsaveResult(event=event, was_saved=bool(deleted), state_version=version)


@records_activity
@transaction.atomic
def register_event(*, visitor: Visitor, mode: Mode, event_id: str) -> RegistrationResult:
    """Register the signed-in visitor, or return the registration they already have.

    Locks the event row before counting confirmed seats, so concurrent calls cannot oversell.
    A cancelled registration is re-activated rather than duplicated. After commit, a new or
    re-activated registration is confirmed by e-mail with the event's `.ics` (once, on every path).
    """
    if visitor.user is None:
        raise AuthRequired()
    event = _public_event(event_id, lock=True)
    # At most one is confirmed (a constraint); the newest cancelled one is re-activated if needed.
    registrations = list(
        Registration.objects.filter(user=visitor.user, event=event).order_by("-updated_at", "-id")
    )
    active = next((registration for registration in registrations if registration.is_active), None)
    if active is not None:
        return RegistrationResult(
            registration=active,
            created=False,
            already_registered=True,
            state_version=state_version(visitor=visitor),
        )
    # Seats are counted under the event's row lock, so concurrent calls cannot oversell (an event
    # without a seat limit needs no count).
    confirmed = (
        Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count()
        if event.capacity is not None
        else None
    )
    policies.may_register(
        policies.EventFacts.of(event, confirmed=confirmed), _facts(visitor), now=timezone.now()
    ).enforce()
    previous = registrations[0] if registrations else None
    if previous is not None:
        previous.status = RegistrationStatus.CONFIRMED
        previous.save(update_fields=["status", "updated_at"])
        registration, created = previous, False
    else:
        registration, created = Registration.objects.create(user=visitor.user, event=event), True
    transaction.on_commit(lambda: emails.send_registration_confirmation(registration), robust=True)
    return RegistrationResult(
        registration=registration,
        created=created,
        already_registered=False,
        state_version=bump_state_version(visitor=visitor),
    )


@records_activity
@transaction.atomic
def cancel_registration(*, visitor: Visitor, mode: Mode, event_id: str) -> CancelResult:
    """Cancel the visitor's registration; cancelling a cancelled one says so and changes nothing."""
    if visitor.user is None:
        raise AuthRequired()
    event = _public_event(event_id, lock=True)
    registration = (
        Registration.objects.filter(user=visitor.user, event=event).order_by("-updated_at", "-id").first()
    )
    if registration is None:
        raise RegistrationNotFound()
    if not registration.is_active:
        return CancelResult(
            registration=registration, already_cancelled=True, state_version=state_version(visitor=visitor)
        )
    policies.may_cancel(
        policies.EventFacts.of(event), _facts(visitor, registered=True), now=timezone.now()
    ).enforce()
    registration.status = RegistrationStatus.CANCELLED
    registration.save(update_fields=["status", "updated_at"])
    return CancelResult(
        registration=registration, already_cancelled=False, state_version=bump_state_version(visitor=visitor)
    )


@dataclass(frozen=True)
class EventStatusResult:
    event: Event
    changed: bool  # False: the event already had that status (a no-op, recorded as UNCHANGED)
    cancelled_registrations: int = 0

    @property
    def outcome(self) -> str:
        return "OK" if self.changed else "UNCHANGED"


@records_activity
@transaction.atomic
def publish_event(*, visitor: Visitor, mode: Mode, event_id: str) -> EventStatusResult:
    """An organiser publishes a draft (or cancelled) event: it becomes public and open."""
    return _set_status(visitor, event_id, EventStatus.PUBLISHED)


@records_activity
@transaction.atomic
def unpublish_event(*, visitor: Visitor, mode: Mode, event_id: str) -> EventStatusResult:
    """An organiser takes an event back to draft: it leaves the catalogue; registrations are kept."""
    return _set_status(visitor, event_id, EventStatus.DRAFT)


@records_activity
@transaction.atomic
def cancel_event(*, visitor: Visitor, mode: Mode, event_id: str) -> EventStatusResult:
    """An organiser cancels an event: every confirmed registration is cancelled with it, each holder's
    stateVersion rises, and each is told by e-mail after commit. The event stays visible, saying so."""
    result = _set_status(visitor, event_id, EventStatus.CANCELLED)
    registrations = list(
        Registration.objects.select_related("user", "event").filter(
            event=result.event, status=RegistrationStatus.CONFIRMED
        )
    )
    if not registrations:
        return result
    Registration.objects.filter(pk__in=[r.pk for r in registrations]).update(
        status=RegistrationStatus.CANCELLED, updated_at=timezone.now()
    )
    for registration in registrations:
        registration.status = RegistrationStatus.CANCELLED
        bump_state_version(visitor=Visitor(user=registration.user))
        transaction.on_commit(functools.partial(emails.send_event_cancelled, registration), robust=True)
    return EventStatusResult(
        event=result.event, changed=result.changed, cancelled_registrations=len(registrations)
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
    return EventStatusResult(event=event, changed=True)


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


def _facts(visitor: Visitor, *, registered: bool = False) -> policies.VisitorFacts:
    return policies.VisitorFacts(
        signed_in=visitor.user is not None, has_session=bool(visitor.key), registered=registered
    )
