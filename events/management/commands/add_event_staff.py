"""`manage.py add_event_staff EVENT_ID USERNAME --role manager|door [--remove]`: an event's team.

Adds the person to the event's team with the role (or changes their role), or takes them off it with
`--remove`. What each role may do is in `events.policies`. A manager also gets the admin's access
(`is_staff` and the "Event managers" group, made when missing), where they see their own events only;
someone who manages no event any more leaves the group (`events.admin.sync_manager_access`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from events.admin import MANAGERS_GROUP, sync_manager_access
from events.choices import StaffRole
from events.models import Event, EventStaff


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

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        role, remove = options["role"], options["remove"]
        if remove and role:
            raise CommandError("Give either --role or --remove, not both.")
        if not remove and role not in StaffRole.values:
            given = f"Unknown role {role!r}" if role else "No role given"
            raise CommandError(f"{given}: use --role {' or --role '.join(StaffRole.values)} (or --remove).")
        event = Event.objects.filter(public_id=options["event_id"]).first()
        if event is None:
            raise CommandError(f"No event has the id {options['event_id']!r}.")
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: options["username"]}).first()
        if user is None:
            raise CommandError(f"No person has the username {options['username']!r}.")
        name = user.get_username()

        if remove:
            deleted, _rows = EventStaff.objects.filter(event=event, user=user).delete()
            manages = sync_manager_access(user)
            if not deleted:
                self.stdout.write(f"{name} was not on the team of {event.public_id}; nothing changed.")
                return
            self.stdout.write(f"{name} is no longer on the team of {event.public_id}.")
            if not manages:
                self.stdout.write(f"{name} manages no event now (not in the group {MANAGERS_GROUP!r}).")
            return

        member, created = EventStaff.objects.update_or_create(event=event, user=user, defaults={"role": role})
        manages = sync_manager_access(user)
        if created:
            self.stdout.write(f"{name} is added to the team of {event.public_id} as {member.role}.")
        else:
            self.stdout.write(f"{name} is on the team of {event.public_id} as {member.role} now.")
        if manages:
            self.stdout.write(
                f"{name} may sign in to the admin (is_staff, group {MANAGERS_GROUP!r}) and sees the "
                "events they manage only."
            )
