"""`make faults`' `payment-sweep`: the payment sweep killed in the middle of its batch, then run again.

The sweep (`events.sweeps`, what the worker runs every PAYMENT_SWEEP_MINUTES and `manage.py
expire_payments` runs at once) expires every registration whose bank transfer did not come by its
deadline, in one transaction per batch: the registrations marked expired, each freed seat offered to
the next person waiting (`process_queue`, its e-mail queued), the seats recounted, the people's e-mail
queued, and one Activity row per expiry (channel `system`, the declared system actor). A process
killed in there must leave nothing half done, and the next run must do it all, once.

Set up before the traffic (`bench.tasks overdue-payments`, through the action rows): `--sweep-events`
paid events of `--sweep-seats` seats, each seat held by a registration waiting for its transfer, past
its deadline, and one more person waiting than there are seats. During the traffic: this run holds
the row lock of the last event's first waiting person (its own transaction, `FOR UPDATE`), starts
`manage.py expire_payments`, waits until the sweep's connection (found by its application_name) is
blocked on that lock inside its transaction, which is after its UPDATE of the registrations and the
offers of every other event, and SIGKILLs the command; it lets the lock go, waits for the sweep's
connection to end, reads what the killed run left, then runs the command again until it says nothing
is overdue (the restart). Afterwards, on the database: every overdue registration expired, with
exactly one Activity row (`expire_payments`, channel `system`, its event's), told once (in exactly one
queued `tell_expired_payments` task); on each event as many offers as seats freed, each made once
(one queued offer e-mail per offered entry), the extra person still waiting; and the killed run left
nothing (its transaction rolled back whole).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bench.infra import PYTHON, ROOT, BenchError, last_json_line, log, run
from bench.tables import markdown

if TYPE_CHECKING:
    from bench.faults import Cluster, Traffic

NAME = "payment-sweep"
#: The sweep's connection's application_name (libpq's PGAPPNAME): how this run finds its backend.
APP = "faults-payment-sweep"
PREFIX = "evt-sweep-"  # bench.tasks.SWEEP_PREFIX (bench.tasks sets Django up on import: not imported)
#: The command as an operator runs it, less the system checks (the server's start ran them; on a busy
#: machine they are most of a run's time).
COMMAND = [PYTHON, "manage.py", "expire_payments", "--skip-checks"]
BLOCKED_LIMIT = 120.0  # seconds the sweep may take to reach the held lock
GONE_LIMIT = 30.0  # seconds the killed sweep's connection may take to end once the lock is let go
MAX_RESTARTS = 10  # runs of the command after the kill until it finds nothing overdue


#: What is the run's own: the seeded events' rows (the traffic's are on other events).
_OURS_R = "JOIN events_event e ON e.id = r.event_id WHERE e.public_id LIKE 'evt-sweep-%'"
_OURS_W = "JOIN events_event e ON e.id = w.event_id WHERE e.public_id LIKE 'evt-sweep-%'"
_OURS_A = (
    "JOIN events_event e ON e.id = a.event_id "
    "WHERE e.public_id LIKE 'evt-sweep-%' AND a.action = 'expire_payments'"
)
_EXPIRED = " AND r.status = 'expired'"
_OFFERED = " AND w.status = 'offered'"


@dataclass
class PaymentSweep:
    """The fault's state between its run and its check (the database is read again there)."""

    db_name: str
    seeded: dict = field(default_factory=dict)
    observed: dict = field(default_factory=dict)

    def prepare(self, env: dict[str, str], args: argparse.Namespace) -> None:
        command = [PYTHON, "-m", "bench.tasks", "overdue-payments"]
        command += ["--events", str(args.sweep_events), "--seats", str(args.sweep_seats)]
        output = run(command, env=env, timeout=900, what="bench.tasks overdue-payments")
        self.seeded = last_json_line(output, "bench.tasks overdue-payments")
        log(
            f"payment sweep: {self.seeded['overdue']} overdue registrations on {self.seeded['events']} events"
        )

    def run(self, traffic: Traffic, cluster: Cluster, env: dict[str, str], args: argparse.Namespace) -> None:
        last = f"{PREFIX}{args.sweep_events - 1}"  # the sweep offers the events' seats in key order
        with cluster.connect(self.db_name) as holder, holder.transaction():
            held = holder.execute(
                "SELECT w.id FROM events_waitlistentry w JOIN events_event e ON e.id = w.event_id "
                "WHERE e.public_id = %s AND w.status = 'waiting' ORDER BY w.joined_at, w.id LIMIT 1 "
                "FOR UPDATE OF w",
                (last,),
            ).fetchone()
            if held is None:
                raise BenchError(f"payment sweep: nobody waits on {last}")
            sweep = subprocess.Popen(
                COMMAND,
                cwd=ROOT,
                env={**env, "PGAPPNAME": APP},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            blocked = self._wait_blocked(cluster, sweep)
            os.kill(sweep.pid, signal.SIGKILL)
            sweep.wait(timeout=30)
            self.observed["killed_at"] = traffic.now()
            self.observed["blocked_on"] = blocked
            log(f"  t={traffic.now():5.1f} s  payment sweep killed inside its transaction ({blocked[:40]}…)")
        self._wait_gone(cluster)
        with cluster.connect(self.db_name) as connection:
            self.observed["left_by_killed_run"] = {
                "expired": _count(
                    connection, "SELECT count(*) FROM events_registration r " + _OURS_R + _EXPIRED
                ),
                "activity": _count(connection, "SELECT count(*) FROM events_activity a " + _OURS_A),
                "offered": _count(
                    connection, "SELECT count(*) FROM events_waitlistentry w " + _OURS_W + _OFFERED
                ),
            }
        runs = []
        for _ in range(MAX_RESTARTS):
            output = run(COMMAND, env=env, timeout=300, what="expire_payments")
            runs.append(output.strip().splitlines()[-1] if output.strip() else "")
            if "Nothing is overdue." in output:
                break
        self.observed["restart_runs"] = runs
        log(f"  t={traffic.now():5.1f} s  payment sweep run again {len(runs)}× after the kill: {runs[0]}")

    def _wait_blocked(self, cluster: Cluster, sweep: subprocess.Popen) -> str:
        """The sweep's statement once its connection waits for the held lock inside its transaction."""
        deadline = time.monotonic() + BLOCKED_LIMIT
        with cluster.connect(self.db_name) as watcher:
            while time.monotonic() < deadline:
                if sweep.poll() is not None:
                    raise BenchError(f"payment sweep: the command ended ({sweep.returncode}) before the lock")
                row = watcher.execute(
                    "SELECT query FROM pg_stat_activity WHERE application_name = %s "
                    "AND wait_event_type = 'Lock' AND xact_start IS NOT NULL",
                    (APP,),
                ).fetchone()
                if row is not None:
                    return row[0]
                time.sleep(0.01)
        sweep.kill()
        raise BenchError(f"payment sweep: not blocked on the held lock within {BLOCKED_LIMIT:g} s")

    def _wait_gone(self, cluster: Cluster) -> None:
        """The killed sweep's server process ends once it may go on and finds its client gone."""
        deadline = time.monotonic() + GONE_LIMIT
        with cluster.connect(self.db_name) as watcher:
            while time.monotonic() < deadline:
                sql = "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s"
                if not watcher.execute(sql, (APP,)).fetchone()[0]:
                    return
                time.sleep(0.05)
        raise BenchError(f"payment sweep: the killed sweep's connection still there after {GONE_LIMIT:g} s")

    def check(self, cluster: Cluster) -> tuple[dict, list[str]]:
        with cluster.connect(self.db_name) as connection:
            by_event = {
                event: (seats, expired, pending)
                for event, seats, expired, pending in connection.execute(
                    "SELECT e.public_id, e.capacity, "
                    "count(*) FILTER (WHERE r.status = 'expired'), "
                    "count(*) FILTER (WHERE r.status = 'pending_payment') "
                    "FROM events_event e JOIN events_registration r ON r.event_id = e.id "
                    "WHERE e.public_id LIKE %s GROUP BY e.public_id, e.capacity",
                    (f"{PREFIX}%",),
                ).fetchall()
            }
            rows = dict(
                connection.execute(
                    "SELECT e.public_id, count(*) FROM events_activity a "
                    + _OURS_A
                    + " AND a.mode = 'system' "
                    "GROUP BY e.public_id",
                ).fetchall()
            )
            other_rows = _count(
                connection, "SELECT count(*) FROM events_activity a " + _OURS_A + " AND a.mode <> 'system'"
            )
            offers = dict(
                connection.execute(
                    "SELECT e.public_id, count(*) FROM events_waitlistentry w " + _OURS_W + _OFFERED + " "
                    "GROUP BY e.public_id",
                ).fetchall()
            )
            still_waiting = _count(
                connection,
                "SELECT count(*) FROM events_waitlistentry w " + _OURS_W + " AND w.status = 'waiting'",
            )
            # Each expired registration in exactly one queued tell_expired_payments task (its argument
            # is the batch's ids); each offered entry in exactly one queued offer e-mail.
            told = dict(
                connection.execute(
                    "SELECT ids.id::bigint, count(*) FROM django_tasks_database_dbtaskresult t, "
                    "jsonb_array_elements_text(t.args_kwargs -> 'args' -> 0) AS ids(id) "
                    "WHERE t.task_path = 'events.tasks.tell_expired_payments' GROUP BY 1"
                ).fetchall()
            )
            expired_ids = [
                row[0]
                for row in connection.execute(
                    "SELECT r.id FROM events_registration r " + _OURS_R + _EXPIRED
                ).fetchall()
            ]
            offer_mails = dict(
                connection.execute(
                    "SELECT (args_kwargs -> 'args' -> 1 ->> 'entry_id')::bigint, count(*) "
                    "FROM django_tasks_database_dbtaskresult "
                    "WHERE task_path = 'events.mail.outbox.open_notification' "
                    "AND args_kwargs -> 'args' -> 1 ->> 'kind' = 'waitlist_offer' GROUP BY 1"
                ).fetchall()
            )
            offered_ids = [
                row[0]
                for row in connection.execute(
                    "SELECT w.id FROM events_waitlistentry w " + _OURS_W + _OFFERED
                ).fetchall()
            ]
        overdue = int(self.seeded.get("overdue", 0))
        expired = sum(expired for _, expired, _ in by_event.values())
        figures = {
            "events": len(by_event),
            "overdue": overdue,
            "blocked_on": self.observed.get("blocked_on", ""),
            "left_by_killed_run": self.observed.get("left_by_killed_run", {}),
            "restart_runs": self.observed.get("restart_runs", []),
            "expired": expired,
            "still_pending": sum(pending for _, _, pending in by_event.values()),
            "events_with_activity_not_one_per_expiry": sum(
                1 for event, (_, done, _) in by_event.items() if rows.get(event, 0) != done
            ),
            "activity_rows": sum(rows.values()),
            "activity_rows_not_system": other_rows,
            "events_with_offers_not_one_per_seat": sum(
                1 for event, (_, done, _) in by_event.items() if offers.get(event, 0) != done
            ),
            "offers": sum(offers.values()),
            "still_waiting": still_waiting,
            "expired_not_told_once": sum(1 for pk in expired_ids if told.get(pk, 0) != 1),
            "offers_not_mailed_once": sum(1 for pk in offered_ids if offer_mails.get(pk, 0) != 1),
        }
        violations = []
        left = figures["left_by_killed_run"]
        if not figures["blocked_on"]:
            violations.append("payment sweep: never caught in the middle of its batch")
        if any(left.values()):
            violations.append(f"payment sweep: the killed run left changes behind: {left}")
        if not overdue or figures["events"] != self.seeded.get("events"):
            violations.append(f"payment sweep: the run proves nothing (seeded {self.seeded})")
        if figures["expired"] != overdue or figures["still_pending"]:
            violations.append(f"payment sweep: {figures['expired']} of {overdue} overdue expired")
        for name in (
            "events_with_activity_not_one_per_expiry",
            "activity_rows_not_system",
            "events_with_offers_not_one_per_seat",
            "expired_not_told_once",
            "offers_not_mailed_once",
        ):
            if figures[name]:
                violations.append(f"payment sweep: {name.replace('_', ' ')}: {figures[name]}")
        if figures["activity_rows"] != overdue:
            violations.append(
                f"payment sweep: {figures['activity_rows']} Activity rows for {overdue} expiries"
            )
        if figures["still_waiting"] != figures["events"]:  # one more person waited than there were seats
            violations.append(f"payment sweep: {figures['still_waiting']} still waiting, not one per event")
        runs = figures["restart_runs"]
        if not runs or "Nothing is overdue." not in runs[-1]:
            violations.append(f"payment sweep: still something overdue after {len(runs)} runs: {runs}")
        return figures, violations

    def table(self, figures: dict) -> str:
        left = figures["left_by_killed_run"]
        rows: list[tuple[str, ...]] = [
            (
                "overdue registrations",
                str(figures["overdue"]),
                f"on {figures['events']} events with waiting lists",
            ),
            (
                "sweep killed while blocked on",
                figures["blocked_on"][:60] or "NEVER",
                "inside its transaction",
            ),
            (
                "left by the killed run",
                str(sum(left.values())),
                f"expired {left.get('expired')}, Activity rows {left.get('activity')}, "
                f"offers {left.get('offered')}; must be 0",
            ),
            ("runs after the kill", str(len(figures["restart_runs"])), " / ".join(figures["restart_runs"])),
            ("expired", str(figures["expired"]), f"still pending {figures['still_pending']}, must be 0"),
            (
                "expiries without exactly one Activity row",
                str(figures["events_with_activity_not_one_per_expiry"]),
                f"events; {figures['activity_rows']} rows, "
                f"{figures['activity_rows_not_system']} not of channel system",
            ),
            ("expired not told exactly once", str(figures["expired_not_told_once"]), "must be 0"),
            (
                "freed seats not offered exactly once",
                str(figures["events_with_offers_not_one_per_seat"]),
                f"events; {figures['offers']} offers, "
                f"{figures['still_waiting']} still waiting (one per event)",
            ),
            ("offers not mailed exactly once", str(figures["offers_not_mailed_once"]), "must be 0"),
        ]
        return markdown(rows, (NAME, "figure", "detail"))


def _count(connection, sql: str) -> int:
    return int(connection.execute(sql).fetchone()[0])
