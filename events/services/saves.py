"""Saving and unsaving events, for an account or an anonymous visitor's session token."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from core.errors import AuthRequired
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


@dataclass(frozen=True)
class MergeResult:
    merged: int  # saves new to the account

    @property
    def outcome(self) -> str:
        return "OK" if self.merged else "UNCHANGED"


@atomic_use_case
def merge_saved_events(*, visitor: Visitor, token: str) -> MergeResult:
    """Move an anonymous visitor's saves (their session's `token`) to the account they signed in to
    (`visitor`); the account's stateVersion rises when it gained any. Performed at sign-in
    (`accounts.signals`); a visitor without an account has nothing to merge into."""
    if visitor.user is None:
        raise AuthRequired()
    saves = SavedEvent.objects.filter(visitor_token=token)
    already = set(SavedEvent.objects.filter(user=visitor.user).values_list("event_id", flat=True))
    new = [save for save in saves if save.event_id not in already]
    SavedEvent.objects.bulk_create([SavedEvent(user=visitor.user, event_id=save.event_id) for save in new])
    saves.delete()
    if new:
        bump_state_version(visitor=visitor)
    return MergeResult(merged=len(new))
