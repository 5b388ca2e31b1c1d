"""`manage.py import_bank_statement FILE [--event EVENT_ID]`: apply a bank statement's rows.

The file is read by `events.bank_statements.read_statement` (its formats, encodings, columns and the
reasons a row is invalid are that reader's). Each row is then applied by performing the
`apply_bank_row` row as the declared system actor (`core.visitors.SYSTEM`, channel `admin`, the
command named as its client): once per row whatever the number of imports (its checksum), matched by
its reference or by the account digits the person reported plus the amount, and confirmed through the
confirm row's own transition when the amount is exactly what is due. `--event` limits the matching to
one event. Each row's final state is printed; the account digits are masked (they are a credential).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.visitors import SYSTEM, Mode
from events.actions import ACTIONS, Caller, perform
from events.bank_statements import read_statement
from events.contract import bank_row_data, mask_digits
from events.models import Event

#: The Activity rows' client: what acted for the operator.
CLIENT = "manage.py import_bank_statement"


class Command(BaseCommand):
    help = "Apply a bank statement's rows to the payments waiting for them (each row once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file", help="The statement (CSV: date, amount, reference, payer, account_last5)."
        )
        parser.add_argument("--event", dest="event_id", help="Match the rows to this event's payments only.")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["file"])
        event_id = options.get("event_id")
        if event_id and not Event.objects.filter(public_id=event_id).exists():
            raise CommandError(f"No event has the id {event_id!r}.")
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}") from error
        statement = read_statement(data)
        if statement.refusal:
            raise CommandError(f"{path.name}: {statement.refusal}")
        caller = Caller(visitor=SYSTEM, channel=Mode.ADMIN, client=CLIENT)
        states: Counter[str] = Counter()
        for row in statement.rows:
            performed = perform(
                ACTIONS["apply_bank_row"], caller, bank_row_data(row, source=path.name, event_id=event_id)
            )
            if performed.error is not None:
                raise CommandError(f"line {row.line}: {performed.error}")
            result = performed.result
            state = result.state if result.applied else "already imported"
            states[state] += 1
            self.stdout.write(
                f"line {row.line}: {state} ({row.amount} TWD, account {mask_digits(row.account_last5)})"
            )
        summary = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
        self.stdout.write(f"{len(statement.rows)} row(s): {summary or 'none'}.")
