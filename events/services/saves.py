"""Saving and unsaving events, for an account or an anonymous visitor's session token."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import policies
from ..models import Event, SavedEvent
from ..selectors import saved_owner, state_version
from .common import bump_state_version, public_event, visitor_facts


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


@atomic_use_case
def save_event(*, visitor: Visitor, event_id: str) -> SaveResult:
    """Save a published event for the visitor (account or session token). Saving twice is a no-op."""
    event = public_event(event_id)
    policies.may_save(policies.EventFacts.of(event), visitor_facts(visitor)).enforce()
    owner = saved_owner(visitor) or {}
    try:
        with transaction.atomic():
            SavedEvent.objects.create(event=event, **owner)
    except IntegrityError:
        # The unique constraint answers "already saved" (also when a concurrent save won the race).
        return SaveResult(event=event, already_saved=True, state_version=state_version(visitor=visitor))
    return SaveResult(event=event, already_saved=False, state_version=bump_state_version(visitor=visitor))


@atomic_use_case
def unsave_event(*, visitor: Visitor, event_id: str) -> UnsaveResult:
    """Remove a save. Removing what is not saved changes nothing and is not an error."""
    event = public_event(event_id)
    owner = saved_owner(visitor)
    deleted = SavedEvent.objects.filter(event=event, **owner).delete()[0] if owner else 0
    version = bump_state_version(visitor=visitor) if deleted else state_version(visitor=visitor)
    return UnsaveResult(event=event, was_saved=bool(deleted), state_version=version)


@atomic_use_case
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
