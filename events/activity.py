"""Write the `Activity` rows: one per action call, asked for by `events.actions.perform` alone.

The audit trail survives a crash. The row of a write that succeeded (a save, a registration, a
check-in, an organiser's action: every row of events/actions.py that is not read-only) is inserted in
the write's own transaction (`record_write`, one INSERT, which `perform` runs before its commit): the
change and the record of who made it, for whom and through which channel commit together or not at
all, so a process killed right after the commit has lost nothing. A refused call and a read change
nothing, so their rows are made after the call (`record`), refusals included: a call refused before
its use case ran (bad input, no sign-in, a token without the scope) is one row too, and the
dashboard's refusals are then every refusal callers met. A page re-drawn after a write calls the
selectors directly and writes nothing, so one action is one row.

Those other rows are written in batches, not by the request that made them (`ACTIVITY_FLUSH_SECONDS`,
default 1): a synchronous INSERT and its commit on every call, reads included, was an eighth of an API
search (bench/profiles/README.md). Each process keeps them in memory and a thread of its own writes
them in one INSERT when `ACTIVITY_BATCH_ROWS` are waiting or the oldest has waited the flush interval,
and at a normal exit (gunicorn's graceful stop, Ctrl-C, the end of a management command). A row keeps
the time of its call. The thread keeps its database connection while rows keep coming (opening one a
second cost the API search's slowest answers) and drops it when idle or after a database error. A
process killed without warning (SIGKILL, a worker timeout) loses at most its last interval's reads and
refusals, never a write's row. With `ACTIVITY_FLUSH_SECONDS=0` every row is written and counted at
once (the tests use that, and check the batched path on its own in tests/events/test_activity_buffer.py).

Every row is counted into its day's `ActivityCount` by mode, action, outcome and connected agent: what
the agent-readiness dashboard reads. A batch is counted as it is written (`write_rows`, one upsert). A
write's row is not counted in the write: an upsert of a shared count row there would make every write
wait for the others on that row (a rush of registrations on one event). It is inserted `counted=False`
and counted after the commit, within the flush interval, by the same thread (`count_waiting`): one
transaction marks the rows counted and adds them to their counts, so each is counted exactly once,
whichever process counts it. A pass counts every row waiting, not only its process's, and a process's
first pass comes with its first row of any kind, so the rows of a process killed before its pass are
counted by the next pass anywhere: any process's after its next write, or the first of a new process
(the worker gunicorn starts in its place). The counts therefore always equal counting the counted
rows, and lag the rows by about the interval. `recount` rebuilds them after rows were written another
way.
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
    *,
    action: str,
    mode: Mode,
    outcome: str,
    visitor: Visitor,
    event: int | str | None,
    client: str = "",
    claimed_mode: str = "",
) -> None:
    """One row for one call of `action` that changed nothing (a read, a refusal), written after the call
    (only `events.actions.perform` calls this): `event` is the event's key, or a well-formed public id
    that is turned into its key when the row is written; `client` is the connected agent that held the
    caller's OAuth token ("" for none); `claimed_mode` what the request said it was (`X-Client-Mode`)."""
    row = _row(action, mode, outcome, visitor, event, client, claimed_mode)
    public_id = event if isinstance(event, str) else None
    if _flush_seconds() > 0:
        BUFFER.add(row, public_id=public_id)
        return
    if public_id:  # looked up inside the INSERT itself: one statement
        row.event_id = Subquery(Event.objects.filter(public_id=public_id).values("pk")[:1])
    try:
        with transaction.atomic():
            row.save(force_insert=True)
            _count(_keys([row]))
    except DatabaseError:
        # Losing the row of a read or a refusal must not turn a served answer into a failure.
        logger.exception("Could not record activity %s", action)


def record_write(
    *,
    action: str,
    mode: Mode,
    outcome: str,
    visitor: Visitor,
    event: int | str | None,
    client: str = "",
    claimed_mode: str = "",
) -> None:
    """The row of a write that succeeded, inserted now, inside the write's transaction (which
    `events.actions.perform` opens and commits): one INSERT, not yet counted (`written` has it counted
    once the transaction has committed). It raises what the database raises: a write whose record
    cannot be made is rolled back with it, and the caller gets the outage's answer."""
    row = _row(action, mode, outcome, visitor, event, client, claimed_mode)
    row.counted = False
    if isinstance(event, str):  # looked up inside the INSERT itself: one statement
        row.event_id = Subquery(Event.objects.filter(public_id=event).values("pk")[:1])
    row.save(force_insert=True)


def record_writes(*, rows: list[dict[str, Any]]) -> None:
    """The rows of one write that changed several things each worth its own record (a sweep's batch:
    one row per registration it expired), inserted in one statement in the write's transaction, as
    `record_write`'s one row is; each `rows` entry holds `record_write`'s arguments (`event` a key)."""
    made = [
        _row(r["action"], r["mode"], r["outcome"], r["visitor"], r["event"], r["client"], r["claimed_mode"])
        for r in rows
    ]
    for row in made:
        row.counted = False
    Activity.objects.bulk_create(made)


def written() -> None:
    """A write's row was inserted (`record_write`): count it now with `ACTIVITY_FLUSH_SECONDS=0`, else
    have this process's thread count it within the interval, once the write has committed."""
    if _flush_seconds() > 0:
        transaction.on_commit(BUFFER.note_written)
        return
    try:
        count_waiting()
    except DatabaseError:
        # The row is safe; it is counted by the next pass (here or in any other process).
        logger.exception("Could not count the waiting activity rows; they stay waiting")


def _flush_seconds() -> float:
    return float(getattr(settings, "ACTIVITY_FLUSH_SECONDS", 1.0))


def _batch_rows() -> int:
    return int(getattr(settings, "ACTIVITY_BATCH_ROWS", 200))


def _row(
    action: str,
    mode: Any,
    outcome: str,
    visitor: Any,
    event: int | str | None,
    client: str = "",
    claimed_mode: str = "",
) -> Activity:
    visitor = visitor if isinstance(visitor, Visitor) else Visitor()
    return Activity(
        action=action,
        mode=mode if mode in Mode.values else Mode.API,
        outcome=outcome[:40],
        event_id=event if isinstance(event, int) else None,
        user=visitor.user,
        visitor_token=visitor.token,
        client=(client or "")[:CLIENT_LENGTH],
        claimed_mode=claimed_mode if claimed_mode in Mode.values else "",
    )


class ActivityBuffer:
    """This process's rows not yet written, whether writes' rows wait to be counted, and the thread that
    writes and counts them (see the module)."""

    #: Rows kept while the database cannot take them; beyond this the oldest are dropped (and logged).
    MAX_WAITING = 100_000

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # a child writes only its own rows

    def _reset(self) -> None:
        self._rows: list[tuple[Activity, str | None]] = []
        self._lock = threading.Lock()  # guards _rows, _oldest and the two below
        self._writing = threading.Lock()  # one flush at a time: the thread's, or the one at exit
        self._wake = threading.Event()
        self._oldest = 0.0
        # Rows may wait to be counted: this process's writes', or those of a process killed before
        # counting its own, which the first pass counts (due at once: "since" the beginning).
        self._uncounted = True
        self._uncounted_since = 0.0
        self._thread: threading.Thread | None = None

    def add(self, row: Activity, *, public_id: str | None) -> None:
        with self._lock:
            if not self._rows:
                self._oldest = time.monotonic()
            self._rows.append((row, public_id))
            full = len(self._rows) >= _batch_rows()
            self._start()
        if full:
            self._wake.set()

    def note_written(self) -> None:
        """A write's row has committed, uncounted: count it (and any other waiting) within the interval."""
        with self._lock:
            if not self._uncounted:
                self._uncounted, self._uncounted_since = True, time.monotonic()
            self._start()

    def _start(self) -> None:
        """The thread, started by the first row (called with `_lock` held)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="activity-writer", daemon=True)
            self._thread.start()
            atexit.register(self.flush)

    def close(self) -> None:
        """Write what waits, and have the thread drop its database connection now."""
        self.flush()
        self._wake.set()

    def waiting(self) -> int:
        with self._lock:
            return len(self._rows)

    def flush(self) -> int:
        """Write every waiting row in one INSERT, then count the writes' rows waiting to be counted; on
        a database error keep either for the next try. Returns the rows written."""
        with self._writing:
            with self._lock:
                taken, self._rows = self._rows, []
                counting, self._uncounted = self._uncounted, False
            written = self._write_batch(taken) if taken else 0
            if counting:
                try:
                    count_waiting()
                except DatabaseError:
                    logger.exception("Could not count the waiting activity rows; will try again")
                    connection.close()
                    with self._lock:
                        if not self._uncounted:
                            self._uncounted, self._uncounted_since = True, time.monotonic()
            return written

    def _write_batch(self, taken: list[tuple[Activity, str | None]]) -> int:
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
                now = time.monotonic()
                waiting = bool(self._rows) or self._uncounted
                due = (
                    bool(self._rows) and (len(self._rows) >= _batch_rows() or now - self._oldest >= interval)
                ) or (self._uncounted and now - self._uncounted_since >= interval)
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
        _count(_keys(rows))


def count_waiting(*, batch: int | None = None) -> int:
    """Count the rows inserted uncounted (the writes' own, `record_write`) into their days' counts, and
    mark them counted, in one transaction per `batch` rows (COUNT_BATCH); returns how many.

    A row is counted in the transaction that marks it, so exactly once, whoever counts it: any process
    counts every waiting row, a killed one's too. On PostgreSQL two processes counting at once take
    different rows (`SKIP LOCKED`, so neither waits for the other); SQLite's transactions here take its
    one write lock at BEGIN (`transaction_mode` IMMEDIATE), so they run one after the other.
    """
    batch = batch or COUNT_BATCH
    done = 0
    while True:
        with transaction.atomic():
            taken = list(
                Activity.objects.filter(counted=False)
                .order_by("pk")
                .select_for_update(skip_locked=True)
                .values_list("pk", "created_at", "mode", "action", "outcome", "client")[:batch]
            )
            if taken:
                Activity.objects.filter(pk__in=[pk for pk, *_ in taken]).update(counted=True)
                _count(Counter((day_of(when), *key) for _, when, *key in taken))
        done += len(taken)
        if len(taken) < batch:
            return done


def day_of(moment: datetime) -> date:
    """The day a row is counted on: its date in the site's TIME_ZONE, whatever zone is active."""
    return timezone.localtime(moment, timezone.get_default_timezone()).date()


#: Keys per upsert: six values each, well under SQLite's 32 766 variables; rows per counting pass.
COUNT_BATCH = 1000


def _keys(rows: Iterable[Activity]) -> Counter[tuple[Any, ...]]:
    return Counter((day_of(row.created_at), row.mode, row.action, row.outcome, row.client) for row in rows)


def _count(counted: Counter[tuple[Any, ...]]) -> None:
    """Add calls to `ActivityCount` by (day, mode, action, outcome, client): one `INSERT … ON CONFLICT
    DO UPDATE` per COUNT_BATCH keys.

    Django's `bulk_create(update_conflicts=True)` can only overwrite a column with the new row's value,
    not add to it, hence the SQL (PostgreSQL and SQLite share this syntax). The keys go in sorted
    order, so two processes that write at once lock the same rows in the same order (no deadlock).
    """
    keys = sorted(counted)
    table = connection.ops.quote_name(ActivityCount._meta.db_table)
    with connection.cursor() as cursor:
        for start in range(0, len(keys), COUNT_BATCH):
            chunk = keys[start : start + COUNT_BATCH]
            values = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} (day, mode, action, outcome, client, calls) VALUES {values} "
                "ON CONFLICT (day, mode, action, outcome, client) "
                f"DO UPDATE SET calls = {table}.calls + excluded.calls",
                [
                    value
                    for key in chunk
                    for value in (connection.ops.adapt_datefield_value(key[0]), *key[1:], counted[key])
                ],
            )


def recount() -> int:
    """Count every row again into `ActivityCount`, after rows were written around `write_rows` (a bulk
    load, rows of a release that had no counts, a changed TIME_ZONE). Returns the counts made.

    It may run while the site writes, and the site's writes never wait for it. On PostgreSQL it first
    takes an EXCLUSIVE lock on the counts' table (reads go on): a batch or a counting pass that has
    added to the counts finishes first, and those that come later wait for the recount, then add to
    the fresh counts. It then marks the waiting rows counted, except those a counting pass in flight
    holds (it counts them after), and counts the rows marked counted, so no row is counted twice or
    left out. SQLite needs no lock: the transaction takes the database's one write lock at BEGIN.
    """
    table = connection.ops.quote_name(ActivityCount._meta.db_table)
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {table} IN EXCLUSIVE MODE")
        waiting = Activity.objects.filter(counted=False).order_by().select_for_update(skip_locked=True)
        Activity.objects.filter(pk__in=waiting.values("pk")).update(counted=True)
        grouped = (
            Activity.objects.filter(counted=True)
            .annotate(day=TruncDate("created_at", tzinfo=timezone.get_default_timezone()))
            .values("day", "mode", "action", "outcome", "client")
            .annotate(calls=Count("*"))
            .order_by()
        )
        ActivityCount.objects.all().delete()
        made = ActivityCount.objects.bulk_create(
            (ActivityCount(**row) for row in grouped.iterator()), batch_size=COUNT_BATCH
        )
    return len(made)


BUFFER = ActivityBuffer()
