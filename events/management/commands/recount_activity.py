"""`manage.py recount_activity`: count every Activity row again into the day counts the dashboard reads.

The counts are kept with the rows as they are written and counted (events/activity.py). Run this after
rows were written another way (a bulk load), after the site's TIME_ZONE changed (days are the site's),
or once the processes of a release that had no counts have stopped. The site may keep running: its
writes never wait for the recount, and the counting in flight is added after it (see
`events.activity.recount`).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from events.activity import recount


class Command(BaseCommand):
    help = "Count every Activity row again into the day counts the agent-readiness dashboard reads."

    def handle(self, **options) -> None:
        made = recount()
        self.stdout.write(f"{made} day counts.")
