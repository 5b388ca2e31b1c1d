"""`manage.py recount_seats`: count every event's taken seats (confirmed plus held) again into
`Event.seats_taken`.

The seat ledger keeps the counter with every change (events/services/ledger.py). Rows written another
way (a bulk load, a cascade) leave it behind; a registration never trusts a counter that disagrees
with the rows and puts it right itself, so this is only to start from the truth. The site may keep
running: the events' rows are locked first, as the ledger's own changes do, so a registration in
flight finishes before they are counted.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand
from django.db import transaction

from events.models import Event
from events.services.ledger import recount_seats


class Command(BaseCommand):
    help = "Count every event's confirmed and held seats again into its seat counter."

    def handle(self, **options) -> None:
        with transaction.atomic():
            list(Event.objects.select_for_update().order_by("pk").values_list("pk", flat=True))  # every row
            counted = recount_seats(Event.objects.all())
        self.stdout.write(f"{counted} events counted.")
