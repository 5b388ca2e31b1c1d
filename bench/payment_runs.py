"""Payments at volume, in-process on a database of their own (`make bench`, figure group "payments").

- The registration write: `POST /api/events/<id>/registration` with three answers and a paid ticket
  type, by `writes` people in turn (Django's test Client, the whole middleware stack), a few between
  each two batches of the sweep: its median time is what the sweep's time per registration is
  compared with.
- The payment sweep (events/sweeps.py, the worker's): `registrations` registrations overdue for their
  transfer on `events` full events, each with more people waiting than it has seats. Swept until
  nothing is overdue, one `expire_payments` batch per call; every registration must be expired and
  every freed seat offered to the people waiting, in the order they joined.
- The bank import (`manage.py import_bank_statement`): a statement of `bank_small` rows, then one of
  `bank_large` rows, each row paying one registration by its reference; then the large one again,
  which must change nothing.
- The real model's cost, from the eval runs recorded in this database (information).

Statements are counted by an execute wrapper (transaction control left out) around the timed calls
alike. Needs a configured Django and a database where the rows can be committed (bench/tasks.py runs
it; tests/bench/test_payment_runs.py with tiny numbers).
"""

from __future__ import annotations

import hashlib
import io
import json
import secrets
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from bench import registration_form
from events.choices import (
    BankRowState,
    EventStatus,
    Level,
    Location,
    PaymentMethod,
    PaymentStatus,
    RegistrationStatus,
    WaitlistStatus,
)
from events.models import Activity, BankStatementRow, Event, Notification, Registration, WaitlistEntry
from events.services import payments
from events.services.ledger import recount_seats
from events.services.payments import REFERENCE_ALPHABET, REFERENCE_LENGTH
from events.sweeps import sweep

User = get_user_model()
#: More people wait on each swept event than it has seats: every freed seat has someone to go to.
EXTRA_WAITING = 10
BANK_PER_EVENT = 100
WARM_ROWS = 20
TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


class Statements:
    """Counts the statements a block runs (an execute wrapper: cheap enough not to weigh on a timing)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
        if not sql.lstrip().upper().startswith(TRANSACTION_CONTROL):
            self.count += 1
        return execute(sql, params, many, context)


@contextmanager
def counted() -> Iterator[tuple[Statements, dict[str, float]]]:
    """(statements, {"ms": …}) of the block."""
    statements, took = Statements(), {"ms": 0.0}
    started = time.perf_counter()
    with connection.execute_wrapper(statements):
        yield statements, took
    took["ms"] = (time.perf_counter() - started) * 1000


def run(
    *,
    registrations: int,
    events: int,
    bank_small: int,
    bank_large: int,
    writes: int,
    model_reports: Path | None = None,
) -> dict[str, Any]:
    per_event = registrations // events
    people = _people(max(2 * per_event + EXTRA_WAITING, BANK_PER_EVENT, writes + 3))
    references = _references(registrations + bank_small + bank_large + WARM_ROWS)
    batches = -(-registrations // payments.EXPIRY_BATCH)
    writing = RegistrationWrites(people[: writes + 3], per_gap=-(-writes // (batches + 1)))
    expiry = expiry_sweep(
        people, per_event=per_event, events=events, references=references, between=writing.some
    )
    writing.some()  # the rest, if any
    write = writing.figure()
    bank = bank_import(people, small=bank_small, large=bank_large, references=references)
    return {
        "vendor": connection.vendor,
        "write": write,
        "expiry": expiry,
        "bank": bank,
        "model_runs": model_runs(model_reports),
        "per_expired_vs_write": round(expiry["ms_per_expired"] / write["median_ms"], 3),
    }


def _people(count: int) -> list:
    unusable = make_password(None)
    User.objects.bulk_create(
        [
            User(username=f"bench-pay-{n}", email=f"bench-pay-{n}@example.com", password=unusable)
            for n in range(count)
        ]
    )
    return list(User.objects.filter(username__startswith="bench-pay-").order_by("pk"))


def _references(count: int) -> Iterator[str]:
    """`count` distinct payment references, in the site's alphabet and length."""
    made: set[str] = set()
    while len(made) < count:
        made.add("".join(secrets.choice(REFERENCE_ALPHABET) for _ in range(REFERENCE_LENGTH)))
    return iter(sorted(made))


def _event(public_id: str, *, capacity: int | None, questions: int = 0) -> Event:
    starts_at = timezone.now() + timedelta(days=40)
    event = Event(
        public_id=public_id,
        title="Bench: a paid event",
        summary="Payments at volume.",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(hours=2),
        location=Location.TAIPEI,
        level=Level.BEGINNER,
        capacity=capacity,
        status=EventStatus.PUBLISHED,
    )
    event.full_clean()
    event.save()
    registration_form.add_questions(event, questions)
    registration_form.add_ticket_types(event)
    return Event.objects.get(pk=event.pk)


def _awaiting_transfer(person: Any, event: Event, *, reference: str, due: datetime) -> Registration:
    """A regular-type registration holding its seat until `due`, its bank transfer awaited (unsaved:
    the sweep's and the import's set-ups bulk-create them)."""
    return Registration(
        user=person,
        event=event,
        status=RegistrationStatus.PENDING_PAYMENT,
        ticket_type="regular",
        amount=registration_form.TICKET_TYPES["regular"],
        payment_method=PaymentMethod.BANK_TRANSFER,
        payment_status=PaymentStatus.AWAITING,
        payment_reference=reference,
        payment_due_at=due,
    )


# ── the registration write ─────────────────────────────────────────────────────────────────────


class RegistrationWrites:
    """Each person registers once for one event (three answers, a paid type) through the REST route,
    `per_gap` of them at a time between the sweep's batches, so that both are timed in the same
    moments of a shared machine (the first three warm up). Every write must answer 201 and hold its
    seat waiting for its payment."""

    def __init__(self, people: list, *, per_gap: int) -> None:
        self.event = _event("evt-bench-pay-writes", capacity=None, questions=3)
        self.url = f"/api/events/{self.event.public_id}/registration"
        self.waiting = list(enumerate(people))
        self.people, self.per_gap = len(people), per_gap
        self.timings: list[float] = []
        self.statements: list[int] = []
        self._write(3)

    def some(self) -> None:
        self._write(self.per_gap)

    def _write(self, count: int) -> None:
        for n, person in self.waiting[:count]:
            client = Client()
            client.force_login(person)
            body = json.dumps(registration_form.body(3, n))
            with counted() as (statements, took):
                response = client.post(self.url, data=body, content_type="application/json")
            if response.status_code != 201:
                raise AssertionError(
                    f"the registration answered {response.status_code}: {response.content[:300]!r}"
                )
            if n >= 3:
                self.timings.append(took["ms"])
                self.statements.append(statements.count)
        del self.waiting[:count]

    def figure(self) -> dict[str, Any]:
        self._write(len(self.waiting))
        held = Registration.objects.filter(
            event=self.event, status=RegistrationStatus.PENDING_PAYMENT
        ).count()
        return {
            "writes": len(self.timings),
            "median_ms": round(statistics.median(self.timings), 2),
            "statements": sorted(set(self.statements)),
            "ok": held == self.people,
        }


# ── the payment sweep ──────────────────────────────────────────────────────────────────────────


def expiry_sweep(
    people: list, *, per_event: int, events: int, references: Iterator[str], between: Callable[[], None]
) -> dict[str, Any]:
    """`events` full events of `per_event` seats, each seat held by a registration overdue for its
    transfer, each with `per_event + EXTRA_WAITING` people waiting; then the sweep until it finds
    nothing overdue (`between` runs after each batch, untimed). Each event's registrations fall due at
    one moment, in the events' order, so a batch (`payments.EXPIRY_BATCH`) takes whole events."""
    now = timezone.now()
    swept = [_event(f"evt-bench-pay-sweep-{n}", capacity=per_event) for n in range(events)]
    holders, waiters = people[:per_event], people[per_event : 2 * per_event + EXTRA_WAITING]
    rows = []
    for index, event in enumerate(swept):
        due = now - timedelta(days=1) + timedelta(seconds=index)
        rows += [_awaiting_transfer(person, event, reference=next(references), due=due) for person in holders]
    Registration.objects.bulk_create(rows, batch_size=2000)
    WaitlistEntry.objects.bulk_create(
        [
            WaitlistEntry(
                event=event,
                user=person,
                status=WaitlistStatus.WAITING,
                joined_at=now - timedelta(hours=1) + timedelta(seconds=n),
            )
            for event in swept
            for n, person in enumerate(waiters)
        ],
        batch_size=2000,
    )
    recount_seats(Event.objects.filter(pk__in=[event.pk for event in swept]))
    batches = []
    while True:
        with counted() as (statements, took):
            performed = sweep(client="bench")
        if performed is None:
            break
        if performed.error is not None:
            raise AssertionError(f"the sweep was refused: {performed.error}")
        result = performed.result
        batches.append(
            {
                "expired": len(result.expired),
                "events": len({r.event_id for r in result.expired}),
                "offers": result.offers,
                "statements": statements.count,
                "ms": round(took["ms"], 1),
            }
        )
        between()
    expired = sum(batch["expired"] for batch in batches)
    by_shape: dict[tuple[int, int, int], set[int]] = {}
    for batch in batches:
        by_shape.setdefault((batch["expired"], batch["events"], batch["offers"]), set()).add(
            batch["statements"]
        )
    checks = _expiry_checks(swept, per_event=per_event)
    constant = all(len(counts) == 1 for counts in by_shape.values())
    total_ms = sum(batch["ms"] for batch in batches)
    return {
        "registrations": per_event * events,
        "events": events,
        "waiting_per_event": per_event + EXTRA_WAITING,
        "batches": batches,
        "expired": expired,
        "offers": sum(batch["offers"] for batch in batches),
        "statements_per_batch": sorted({batch["statements"] for batch in batches}),
        "statements_constant": constant,
        "ms_total": round(total_ms, 1),
        "ms_per_expired": round(total_ms / expired, 3) if expired else None,
        **checks,
        "ok": expired == per_event * events and all(checks.values()) and constant,
    }


def _expiry_checks(swept: list[Event], *, per_event: int) -> dict[str, bool]:
    pks = [event.pk for event in swept]
    registrations = Registration.objects.filter(event_id__in=pks)
    in_order = True
    for event in swept:
        queue = list(
            WaitlistEntry.objects.filter(event=event)
            .order_by("joined_at", "id")
            .values_list("status", flat=True)
        )
        in_order &= queue == [WaitlistStatus.OFFERED] * per_event + [WaitlistStatus.WAITING] * EXTRA_WAITING
    counters = (
        Event.objects.with_seats()
        .filter(pk__in=pks)
        .values_list("seats_taken", "confirmed_count", "held_count")
    )
    return {
        "all_expired": registrations.exclude(status=RegistrationStatus.EXPIRED).count() == 0
        and registrations.filter(payment_status=PaymentStatus.UNPAID).count() == per_event * len(swept),
        "offered_in_queue_order": in_order,
        "seat_counters_right": all(
            taken == confirmed + held == per_event for taken, confirmed, held in counters
        ),
        "one_activity_row_each": Activity.objects.filter(action="expire_payments", event_id__in=pks).count()
        == per_event * len(swept),
    }


# ── the bank import ────────────────────────────────────────────────────────────────────────────


def bank_import(people: list, *, small: int, large: int, references: Iterator[str]) -> dict[str, Any]:
    """Registrations awaiting their transfer (due in ten days), and a statement per size whose rows
    pay them by reference, the exact amount each; imported in turn (a few rows first, to warm up),
    then the large statement again."""
    holders = people[:BANK_PER_EVENT]
    due = timezone.now() + timedelta(days=10)
    workdir = Path(tempfile.mkdtemp(prefix="bench-bank-"))
    files: dict[str, Path] = {}
    for name, size in (("warm", WARM_ROWS), ("small", small), ("large", large)):
        paid: list[str] = []
        for first in range(0, size, BANK_PER_EVENT):
            event = _event(f"evt-bench-pay-bank-{name}-{first // BANK_PER_EVENT}", capacity=None)
            rows = [
                _awaiting_transfer(person, event, reference=next(references), due=due)
                for person in holders[: min(BANK_PER_EVENT, size - first)]
            ]
            Registration.objects.bulk_create(rows)
            recount_seats(Event.objects.filter(pk=event.pk))
            paid += [row.payment_reference for row in rows if row.payment_reference]
        files[name] = workdir / f"statement-{name}.csv"
        files[name].write_text(_statement(paid), encoding="utf-8")
    imports = {name: _import(files[name]) for name in ("warm", "small", "large")}
    before = _payments_digest()
    imports["again"] = _import(files["large"])
    unchanged = _payments_digest() == before
    for path in files.values():
        path.unlink()
    workdir.rmdir()
    matched = all(
        imports[name]["states"] == {BankRowState.MATCHED: size}
        for name, size in (("warm", WARM_ROWS), ("small", small), ("large", large))
    )
    paid_now = Registration.objects.filter(
        event__public_id__startswith="evt-bench-pay-bank-", payment_status=PaymentStatus.PAID
    ).count()
    again_ok = imports["again"]["summary"].endswith(f"{large} already imported.")
    return {
        "small": small,
        "large": large,
        "imports": {name: {k: v for k, v in run.items() if k != "states"} for name, run in imports.items()},
        "large_small_ratio": round(imports["large"]["ms"] / imports["small"]["ms"], 3),
        "again_first_ratio": round(imports["again"]["ms"] / imports["large"]["ms"], 3),
        "all_matched": matched and paid_now == WARM_ROWS + small + large,
        "again_unchanged": unchanged and again_ok,
        "ok": matched and paid_now == WARM_ROWS + small + large and unchanged and again_ok,
    }


def _statement(references: list[str]) -> str:
    """A statement in the site's own layout (generic), one deposit per reference."""
    day = timezone.localdate().isoformat()
    amount = registration_form.TICKET_TYPES["regular"]
    lines = ["date,amount,reference,payer,account_last5"]
    lines += [
        f"{day},{amount},{reference},Bench Payer {n},{10000 + n % 90000}"
        for n, reference in enumerate(references)
    ]
    return "\n".join(lines) + "\n"


def _import(path: Path) -> dict[str, Any]:
    out = io.StringIO()
    with counted() as (statements, took):
        call_command("import_bank_statement", str(path), stdout=out)
    lines = out.getvalue().strip().splitlines()
    rows = int(lines[-1].split(" ", 1)[0])
    states = Counter(BankStatementRow.objects.filter(source=path.name).values_list("state", flat=True))
    return {
        "rows": rows,
        "ms": round(took["ms"], 1),
        "ms_per_row": round(took["ms"] / rows, 3),
        "statements_per_row": round(statements.count / rows, 2),
        "summary": lines[-1],
        "states": dict(states),
    }


def _payments_digest() -> str:
    """What an import may change: the bank rows, every registration's payment, the outbox."""
    registrations = Registration.objects.order_by("pk").values_list(
        "pk", "status", "payment_status", "paid_amount", "paid_at", "paid_via", "ticket_code", "updated_at"
    )
    parts = [
        str(BankStatementRow.objects.count()),
        str(Notification.objects.count()),
        *(repr(row) for row in registrations.iterator()),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# ── the real model's cost ──────────────────────────────────────────────────────────────────────


def model_runs(reports: Path | None = None) -> dict[str, Any]:
    """Tokens per passed case of the newest real-model run over each path: what its cases spent in all,
    prompt and completion, ÷ the cases it passed. Read from the runs' reports (`evals/reports/`, which
    `make evals-model` writes on this machine and git does not keep), since the bench's databases are
    made afresh each run and so hold no recorded run. Empty when this machine has no model report."""
    directory = reports or Path(settings.BASE_DIR) / "evals" / "reports"
    latest: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*-model*.json"), reverse=True):  # newest first (UTC stamps)
        report = json.loads(path.read_text(encoding="utf-8"))
        if report.get("mode") == "model":
            latest.setdefault(report["via"], report | {"file": path.name})
    found = {}
    for via, report in sorted(latest.items()):
        passed = report["totals"]["pass"]
        tokens = report.get("tokens") or {}
        counted = bool(tokens.get("cases"))
        found[via] = {
            "model": report["model"]["model"],
            "revision": report["health"]["start"]["revision"][:10],
            "started_at": report["startedAt"],
            "file": report["file"],
            "cases": report["totals"]["total"],
            "passed": passed,
            "with_tokens": tokens.get("cases", 0),
            "prompt_per_passed": round(tokens["prompt"] / passed) if passed and counted else None,
            "completion_per_passed": round(tokens["completion"] / passed) if passed and counted else None,
        }
    return found
