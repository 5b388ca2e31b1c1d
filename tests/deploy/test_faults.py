"""A database restart and killed gunicorn workers lose nothing that was acknowledged (`make faults`,
bench/faults.py).

Runs the fault run itself once for both tests (shorter, `QUICKER`), about 45 s: a throw-away PostgreSQL
cluster of its own
(never the machine's shared one), gunicorn with 2 sync workers, mixed saves, registrations and searches
while PostgreSQL is stopped for 3 s, restarted, and restarted while the workers' connections are idle,
then while serving workers are SIGKILLed one after the other (the arbiter starts a replacement each
time; more kills until one has cut off a registration in flight), the clients sending a dropped request
again. The run checks every 2xx write against the database
(stored, a registration's confirmation e-mail in the outbox, each stored write's Activity row, no
registration doubled), every answer while the database was away (the 503 envelope, never a 500 or a
hang), recovery within 5 s without restarting gunicorn, that a request dropped by a killed worker was
answered when sent again and a dropped registration ends with exactly one with its Activity row (and
that at least one registration was dropped and sent again: the test fails otherwise), and the workers
(unchanged by the database faults; each killed one replaced, the same arbiter); it exits non-zero on
any violation.
The same run then kills the payment sweep inside its batch, small (the second test): it leaves
nothing, and its restart expires every overdue registration once, with its Activity row, and offers
each freed seat once.
The tests read the tables too, so a figure that must be 0 is seen to be 0. Skipped where the PostgreSQL
server binaries (or, as root, `runuser`) are missing.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings

from bench.faults import unavailable

pytestmark = [pytest.mark.faults, pytest.mark.serial, pytest.mark.own_database]

#: Shorter than `make faults` (docs/reliability.md has its figures), to keep `make test` within its time:
#: 1 s of traffic before the faults, 3 s after each, and 2 kills (each original worker once) instead of 4.
#: Every check is the same. The 5 s recovery limit is still the one judged: the traffic goes on into the
#: next fault, and the first 2xx after one has come within 0.1 s in every run. (The catalogue and the
#: crowd stay: each write pair is sent once, so fewer would run out of pairs.) The payment sweep's fault
#: comes last, small: 6 events of 3 seats (18 overdue registrations).
QUICKER = ("--before", "1", "--after", "3", "--kills", "2", "--sweep-events", "6", "--sweep-seats", "3")
#: The database's, gunicorn's and the payment sweep's faults, one cluster and one site for all of them.
FAULTS = ("--faults", "outage,restart,idle-restart,worker-kill,payment-sweep")


@pytest.fixture(scope="module")
def fault_run() -> tuple[str, dict[str, list[str]]]:
    """The fault run's output and its table rows; every check passed (its exit code says so)."""
    why = unavailable()
    if why:
        pytest.skip(f"the fault run cannot start a PostgreSQL cluster here: {why}")
    done = subprocess.run(
        [sys.executable, "-m", "bench.faults", "--no-record", *QUICKER, *FAULTS],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = f"{done.stdout[-12000:]}\n{done.stderr[-6000:]}"
    assert done.returncode == 0, output
    assert "faults: every check passed" in done.stdout, output
    return output, table_rows(done.stdout)


def table_rows(output: str) -> dict[str, list[str]]:
    """Each printed table row's cells after the first, by its first cell (the check or the figure)."""
    rows = {}
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 1:
            rows[cells[0]] = cells[1:]
    return rows


def test_database_restarts_and_killed_workers_lose_no_acknowledged_write(fault_run):
    output, rows = fault_run
    for must_be_zero in (
        "acknowledged but not in the database",
        "registrations doubled",
        "acknowledged registrations without their outbox e-mail",
        "stored writes without their Activity row",
        "dropped registrations not ending with one",
        "acknowledged but missing (kills)",
        "without their outbox e-mail (kills)",
        "without their Activity row (kills)",
    ):
        assert rows[must_be_zero][0] == "0", f"{must_be_zero}: {rows[must_be_zero]}\n{output}"
    kills = int(rows["worker kills (SIGKILL)"][0])
    assert kills >= 2, output  # more until one cut off a registration in flight
    assert rows["arbiter"][0] == "unchanged", output
    assert rows["gunicorn workers"][0] == f"{kills} killed, each replaced", output
    # At least one registration was cut off by a kill and sent again; each ended as exactly one
    # confirmed registration (none doubled, none lost) with its Activity row.
    cut_off, sent_again = (int(n) for n in rows["registrations dropped, sent again"][0].split(", "))
    assert sent_again >= 1 and sent_again == cut_off, output
    assert rows["dropped registrations without their Activity row"][0] == "0", output
    attempted, acknowledged = rows["registrations attempted, acknowledged"][0].split(", ")
    assert int(attempted) > 0 and acknowledged == attempted, output
    dropped, sent_again = (int(n) for n in rows["dropped, sent again"][0].split(", "))
    assert dropped > 0 and sent_again >= dropped, output


def test_a_payment_sweep_killed_in_its_batch_leaves_nothing_and_its_restart_expires_each_once(fault_run):
    output, rows = fault_run
    assert rows["overdue registrations"][0] == "18", output
    assert rows["sweep killed while blocked on"][0].startswith('UPDATE "events_waitlistentry"'), output
    assert rows["expired"][0] == "18", output
    for must_be_zero in (
        "left by the killed run",
        "expiries without exactly one Activity row",
        "expired not told exactly once",
        "freed seats not offered exactly once",
        "offers not mailed exactly once",
    ):
        assert rows[must_be_zero][0] == "0", f"{must_be_zero}: {rows[must_be_zero]}\n{output}"
    assert rows["runs after the kill"][1].endswith("Nothing is overdue."), output
