"""Write the `Activity` rows: one per action call, asked for by `events.actions.perform` alone.

The row is made after the use case's own transaction has committed or rolled back, so a refused
call is recorded too and a recorded success is never rolled back with a later failure. A call refused
before its use case ran (bad input, no sign-in, a token without the scope) is one row too: the
dashboard's refusals are then every refusal callers met. A page re-drawn after a write calls the
selectors directly and writes nothing, so one action is one row.

Rows are written in batches, not by the request that made them (`ACTIVITY_FLUSH_SECONDS`, default 1):
a synchronous INSERT and its commit on every call, reads included, was an eighth of an API search
(bench/profiles/README.md). Each process keeps its rows in memory and a thread of its own writes them
in one INSERT when `ACTIVITY_BATCH_ROWS` are waiting or the oldest has waited the flush interval, and
at a normal exit (gunicorn's graceful stop, Ctrl-C, the end of a management command), so no row is
lost then. A row keeps the time of its call; counts are exact once written, at most the interval
late. The thread keeps its database connection while rows keep coming (opening one a second cost the
API search's slowest answers) and drops it when idle or after a database error. A process killed
without warning (SIGKILL, a worker timeout) loses at most its last interval's
rows. With `ACTIVITY_FLUSH_SECONDS=0` every row is written at once (the tests use that, and check the
batched path on its own in tests/events/test_activity_buffer.py).

Every row is also counted, in the same transaction, into its day's `ActivityCount` by mode, action,
outcome and connected agent (one upsert per batch): what the agent-readiness dashboard reads.
`write_rows` is the one way rows are written, so the counts equal counting the rows; `recount`
rebuilds them after rows were written another way.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Subquery
from django.db.models.functions import TruncDate
from django.utils import timezone

from core.visitors import Mode, Visitor

from .models import Activity, ActivityCount, Event

logger = logging.getLogger(__name__)

#: The longest client label a row keeps (`Activity.client`'s max_length); a longer one is cut.
CLIENT_LENGTH = 100


def outcome_of(result: Any) -> str:
    """A result may name its own outcome (e.g. ALREADY_SAVED); otherwise it is OK."""
    return getattr(result, "outcome", "OK")


def record(
    *, action: str, mode: Mode, outcome: str, visitor: Visitor, event: int | str | None, client: str = ""
) -> None:
    """One row for one call of `action` (only `events.actions.perform` calls this): `event` is the
    event's key, or a well-formed public id that is turned into its key when the row is written;
    `client` is the connected agent that held the caller's OAuth token ("" for none)."""
    _record(action, mode, outcome, visitor, event, client)


def _flush_seconds() -> float:
    return float(getattr(settings, "ACTIVITY_FLUSH_SECONDS", 1.0))


def _batch_rows() -> int:
    return int(getattr(settings, "ACTIVITY_BATCH_ROWS", 200))


def _record(
    action: str, mode: Any, outcome: str, visitor: Any, event: int | str | None, client: str = ""
) -> None:
    visitor = visitor if isinstance(visitor, Visitor) else Visitor()
    row = Activity(
        action=action,
        mode=mode if mode in Mode.values else Mode.API,
        outcome=outcome[:40],
        event_id=event if isinstance(event, int) else None,
        user=visitor.user,
        visitor_token=visitor.token,
        client=(client or "")[:CLIENT_LENGTH],
    )
    public_id = event if isinstance(event, str) else None
    if _flush_seconds() > 0:
        BUFFER.add(row, public_id=public_id)
        return
    if public_id:  # looked up inside the INSERT itself: one statement
        row.event_id = Subquery(Event.objects.filter(public_id=public_id).values("pk")[:1])
    try:
        with transaction.atomic():
            row.save(force_insert=True)
            _count([row])
    except DatabaseError:
        # Losing an activity row must not turn a served answer into a failure.
        logger.exception("Could not record activity %s", action)


class ActivityBuffer:
    """This process's rows not yet written, and the thread that writes them (see the module)."""

    #: Rows kept while the database cannot take them; beyond this the oldest are dropped (and logged).
    MAX_WAITING = 100_000

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # a child writes only its own rows

    def _reset(self) -> None:
        self._rows: list[tuple[Activity, str | None]] = []
        self._lock = threading.Lock()  # guards _rows and _oldest
        self._writing = threading.Lock()  # one flush at a time: the thread's, or the one at exit
        self._wake = threading.Event()
        self._oldest = 0.0
        self._thread: threading.Thread | None = None

    def add(self, row: Activity, *, public_id: str | None) -> None:
        with self._lock:
            if not self._rows:
                self._oldest = time.monotonic()
            self._rows.append((row, public_id))
            full = len(self._rows) >= _batch_rows()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="activity-writer", daemon=True)
                self._thread.start()
                atexit.register(self.flush)
        if full:
            self._wake.set()

    def close(self) -> None:
        """Write what waits, and have the thread drop its database connection now."""
        self.flush()
        self._wake.set()

    def waiting(self) -> int:
        with self._lock:
            return len(self._rows)

    def flush(self) -> int:
        """Write every waiting row in one INSERT; on a database error keep them for the next try."""
        with self._writing:
            with self._lock:
                taken, self._rows = self._rows, []
            if not taken:
                return 0
            try:
                _write(taken)
            except DatabaseError:
                logger.exception("Could not write %d activity rows; will try again", len(taken))
                connection.close()  # the next try opens a fresh one (e.g. after a database restart)
                with self._lock:
                    self._rows[:0] = taken
                    self._oldest = time.monotonic()
                    dropped = len(self._rows) - self.MAX_WAITING
                    if dropped > 0:
                        del self._rows[:dropped]
                        logger.error("Dropped the %d oldest unwritten activity rows", dropped)
                return 0
            return len(taken)

    def _run(self) -> None:
        while True:
            interval = max(_flush_seconds(), 0.05)
            self._wake.wait(timeout=interval)
            self._wake.clear()
            with self._lock:
                waiting = bool(self._rows)
                due = waiting and (
                    len(self._rows) >= _batch_rows() or time.monotonic() - self._oldest >= interval
                )
            if due:
                self.flush()  # the thread keeps its connection while rows keep coming
            elif not waiting:
                connection.close()  # idle: it holds no connection


def _write(taken: list[tuple[Activity, str | None]]) -> None:
    """One INSERT for the batch; events named by public id are looked up in one query first. A row
    whose person deleted their account while it waited keeps no person (as their older rows do), or
    the whole batch would fail on the missing key at every retry."""
    wanted = {public_id for _, public_id in taken if public_id}
    keys = dict(Event.objects.filter(public_id__in=wanted).values_list("public_id", "pk")) if wanted else {}
    people = {row.user_id for row, _ in taken if row.user_id is not None}
    present = (
        set(get_user_model().objects.filter(pk__in=people).values_list("pk", flat=True)) if people else set()
    )
    for row, public_id in taken:
        if public_id:
            row.event_id = keys.get(public_id)
        if row.user_id is not None and row.user_id not in present:
            row.user_id, row.visitor_token = None, ""
    write_rows([row for row, _ in taken])


def write_rows(rows: list[Activity]) -> None:
    """Insert the rows and add them to their days' counts, in one transaction."""
    with transaction.atomic():
        Activity.objects.bulk_create(rows)
        _count(rows)


def day_of(moment: datetime) -> date:
    """The day a row is counted on: its date in the site's TIME_ZONE, whatever zone is active."""
    return timezone.localtime(moment, timezone.get_default_timezone()).date()


#: Keys per upsert: six values each, well under SQLite's 32 766 variables.
COUNT_BATCH = 1000


def _count(rows: Iterable[Activity]) -> None:
    """Add the rows to `ActivityCount`: one `INSERT … ON CONFLICT DO UPDATE` per COUNT_BATCH keys.

    Django's `bulk_create(update_conflicts=True)` can only overwrite a column with the new row's value,
    not add to it, hence the SQL (PostgreSQL and SQLite share this syntax). The keys go in sorted
    order, so two processes that write at once lock the same rows in the same order (no deadlock).
    """
    counted = Counter((day_of(row.created_at), row.mode, row.action, row.outcome, row.client) for row in rows)
    keys = sorted(counted)
    table = connection.ops.quote_name(ActivityCount._meta.db_table)
    with connection.cursor() as cursor:
        for start in range(0, len(keys), COUNT_BATCH):
            batch = keys[start : start + COUNT_BATCH]
            values = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(batch))
            cursor.execute(
                f"INSERT INTO {table} (day, mode, action, outcome, client, calls) VALUES {values} "
                "ON CONFLICT (day, mode, action, outcome, client) "
                f"DO UPDATE SET calls = {table}.calls + excluded.calls",
                [
                    value
                    for key in batch
                    for value in (connection.ops.adapt_datefield_value(key[0]), *key[1:], counted[key])
                ],
            )


def recount() -> int:
    """Count every row again into `ActivityCount`, after rows were written around `write_rows` (a bulk
    load, rows of a release that had no counts, a changed TIME_ZONE). Returns the counts made.

    It may run while the site writes rows. On PostgreSQL it first takes a SHARE lock on the Activity
    table, which waits for the writes in flight (their rows and counts commit together) and holds new
    ones back until the recount commits; they then add to the fresh counts. SQLite needs no lock: the
    DELETE comes first, and from then on the transaction holds the database's one write lock.
    """
    grouped = (
        Activity.objects.annotate(day=TruncDate("created_at", tzinfo=timezone.get_default_timezone()))
        .values("day", "mode", "action", "outcome", "client")
        .annotate(calls=Count("*"))
        .order_by()
    )
    table = connection.ops.quote_name(Activity._meta.db_table)
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {table} IN SHARE MODE")
        ActivityCount.objects.all().delete()
        made = ActivityCount.objects.bulk_create(
            (ActivityCount(**row) for row in grouped.iterator()), batch_size=COUNT_BATCH
        )
    return len(made)


BUFFER = ActivityBuffer()
