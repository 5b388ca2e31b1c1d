"""`manage.py expire_payments`: what the worker's payment sweep does every PAYMENT_SWEEP_MINUTES, now.

Queues the payment reminders due, then performs the `expire_payments` row as the declared system actor
(`core.visitors.SYSTEM`, channel `admin`, the command named as its client): every registration still
waiting for its transfer after its deadline is expired, its seat offered to the first person waiting,
its person told; one Activity row for each.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from events.sweeps import sweep

#: The Activity rows' client: what acted for the operator.
CLIENT = "manage.py expire_payments"


class Command(BaseCommand):
    help = "Expire the registrations not paid by their deadline (their seats go to the waiting list)."

    def handle(self, *args: Any, **options: Any) -> None:
        performed = sweep(client=CLIENT)
        if performed is None:
            self.stdout.write("Nothing is overdue.")
            return
        if performed.error is not None:
            raise CommandError(str(performed.error))
        result = performed.result
        self.stdout.write(
            f"{len(result.expired)} registration(s) expired; "
            f"{result.offers} seat(s) offered to waiting lists."
        )
