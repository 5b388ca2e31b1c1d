"""Who runs an event: its team (`EventStaff`: managers and door staff), changed by the admin's team
inline and `manage.py add_event_staff` through the `add_event_staff` and `remove_event_staff` rows,
and the admin's access that managing an event gives (`sync_manager_access`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission

from core.errors import InvalidInput
from core.transactions import atomic_use_case
from core.visitors import Visitor

from .. import policies
from ..choices import MANAGER_PERMISSIONS, MANAGERS_GROUP
from ..errors import EventNotFound
from ..models import Event, EventStaff


@dataclass(frozen=True)
class StaffResult:
    """`add_event_staff`: the member's row; `created` (new on the team) or `changed` (a new role)."""

    event: Event
    member: EventStaff
    created: bool
    changed: bool
    manages: bool  # whether the person manages any event now (and so has the admin's access)

    @property
    def outcome(self) -> str:
        return "OK" if self.created or self.changed else "ALREADY_ON_TEAM"


@dataclass(frozen=True)
class StaffRemovalResult:
    event: Event
    removed: bool
    manages: bool

    @property
    def outcome(self) -> str:
        return "OK" if self.removed else "NOT_ON_TEAM"


@atomic_use_case
def add_event_staff(*, visitor: Visitor, event_id: str, username: str, role: str) -> StaffResult:
    """Put a person on the event's team with `role` (or give them that role); a manager gets the
    admin's access (`sync_manager_access`). Only whoever may change teams (`policies.may_change_team`:
    the superusers, and the site's operator through the management command) may. Giving the role a
    person already has changes nothing."""
    event = _team_event(visitor, event_id)
    user = _person(username)
    member = EventStaff.objects.filter(event=event, user=user).first()
    created = member is None
    changed = member is not None and member.role != role
    if member is None:
        member = EventStaff.objects.create(event=event, user=user, role=role)
    elif changed:
        member.role = role
        member.save(update_fields=["role"])
    return StaffResult(
        event=event, member=member, created=created, changed=changed, manages=sync_manager_access(user)
    )


@atomic_use_case
def remove_event_staff(*, visitor: Visitor, event_id: str, username: str) -> StaffRemovalResult:
    """Take a person off the event's team; someone who manages no event any more leaves the managers'
    group. Taking off someone who is not on it changes nothing."""
    event = _team_event(visitor, event_id)
    user = _person(username)
    deleted, _rows = EventStaff.objects.filter(event=event, user=user).delete()
    return StaffRemovalResult(event=event, removed=bool(deleted), manages=sync_manager_access(user))


def _team_event(visitor: Visitor, event_id: str) -> Event:
    facts = policies.StaffFacts(superuser=visitor.system or bool(visitor.user and visitor.user.is_superuser))
    policies.may_change_team(facts).enforce()
    event = Event.objects.filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    return event


def _person(username: str) -> Any:
    User = get_user_model()
    user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
    if user is None:
        raise InvalidInput(
            f"No person has the username {username!r}.", extra={"fields": {"username": ["No such person."]}}
        )
    return user


def managers_group() -> Group:
    """The managers' group with its permissions (made, or completed, when missing)."""
    group, _created = Group.objects.get_or_create(name=MANAGERS_GROUP)
    permissions = Permission.objects.filter(
        content_type__app_label="events", codename__in=MANAGER_PERMISSIONS
    )
    found = {permission.codename for permission in permissions}
    if missing := set(MANAGER_PERMISSIONS) - found:
        raise LookupError(f"Permissions {', '.join(sorted(missing))} do not exist: run migrate first.")
    group.permissions.add(*permissions)
    return group


def sync_manager_access(user: Any) -> bool:
    """Admin access for a person who manages an event (`policies.may_manage_event` on their roles):
    `is_staff` and the managers' group. Someone who manages none any more leaves the group (and keeps
    `is_staff`, which may be theirs for another reason; they see no event's rows). Whether they manage
    an event now."""
    roles = EventStaff.objects.filter(user=user).values_list("role", flat=True)
    manages = any(policies.may_manage_event(policies.StaffFacts(role=role)) for role in roles)
    if manages:
        if not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        user.groups.add(managers_group())
    else:
        user.groups.remove(*Group.objects.filter(name=MANAGERS_GROUP))
    return manages
