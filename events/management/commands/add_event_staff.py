"""`manage.py add_event_staff EVENT_ID USERNAME --role manager|door [--remove]`: an event's team.

Adds the person to the event's team with the role (or changes their role), or takes them off it with
`--remove`, by performing the `add_event_staff` or `remove_event_staff` row as the declared system
actor (`core.visitors.SYSTEM`, channel `admin`): each change has its Activity row, whose client names
the command. What each role may do is in `events.policies`. A manager also gets the admin's access
(`is_staff` and the "Event managers" group, made when missing), where they see their own events only;
someone who manages no event any more leaves the group (`events.services.staff.sync_manager_access`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.visitors import SYSTEM, Mode
from events.actions import ACTIONS, Caller, perform
from events.choices import MANAGERS_GROUP, StaffRole
from events.models import Event

#: The Activity rows' client: what acted for the operator.
CLIENT = "manage.py add_event_staff"


class Command(BaseCommand):
    help = (
        "Add a person to an event's team as manager or door staff (or change their role); "
        "--remove takes them off it. A manager also gets the admin's access to their events."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("event_id", help="The event's id, e.g. evt-webmcp-intro.")
        parser.add_argument("username", help="The person's username.")
        parser.add_argument("--role", help=f"One of: {', '.join(StaffRole.values)}.")
        parser.add_argument("--remove", action="store_true", help="Take the person off the event's team.")

    def handle(self, *args: Any, **options: Any) -> None:
        role, remove = options["role"], options["remove"]
        if remove and role:
            raise CommandError("Give either --role or --remove, not both.")
        if not remove and role not in StaffRole.values:
            given = f"Unknown role {role!r}" if role else "No role given"
            raise CommandError(f"{given}: use --role {' or --role '.join(StaffRole.values)} (or --remove).")
        event_id, username = options["event_id"], options["username"]
        if not Event.objects.filter(public_id=event_id).exists():
            raise CommandError(f"No event has the id {event_id!r}.")
        User = get_user_model()
        if not User.objects.filter(**{User.USERNAME_FIELD: username}).exists():
            raise CommandError(f"No person has the username {username!r}.")

        caller = Caller(visitor=SYSTEM, channel=Mode.ADMIN, client=CLIENT)
        data = {"event_id": event_id, "username": username}
        name = "remove_event_staff" if remove else "add_event_staff"
        performed = perform(ACTIONS[name], caller, data if remove else {**data, "role": role})
        if performed.error is not None:
            raise CommandError(str(performed.error))
        result = performed.result

        if remove:
            if not result.removed:
                self.stdout.write(f"{username} was not on the team of {event_id}; nothing changed.")
                return
            self.stdout.write(f"{username} is no longer on the team of {event_id}.")
            if not result.manages:
                self.stdout.write(f"{username} manages no event now (not in the group {MANAGERS_GROUP!r}).")
            return

        if result.created:
            self.stdout.write(f"{username} is added to the team of {event_id} as {result.member.role}.")
        else:
            self.stdout.write(f"{username} is on the team of {event_id} as {result.member.role} now.")
        if result.manages:
            self.stdout.write(
                f"{username} may sign in to the admin (is_staff, group {MANAGERS_GROUP!r}) and sees the "
                "events they manage only."
            )
