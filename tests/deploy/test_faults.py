"""A database restart loses nothing that was acknowledged (`make faults`, bench/faults.py).

Runs the fault run itself, about 45 s: a throw-away PostgreSQL cluster of its own (never the machine's
shared one), gunicorn with 2 sync workers, mixed saves, registrations and searches while PostgreSQL is
stopped for 3 s, restarted, and restarted while the workers' connections are idle. The run checks every
2xx write against the database, every answer while it was away (the 503 envelope, never a 500 or a
hang), recovery within 5 s without restarting gunicorn, and the workers' PIDs; it exits non-zero on
any violation. Skipped where the PostgreSQL server binaries (or, as root, `runuser`) are missing.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings

from bench.faults import unavailable

pytestmark = [pytest.mark.faults, pytest.mark.serial]


def test_a_database_restart_loses_no_acknowledged_write():
    why = unavailable()
    if why:
        pytest.skip(f"the fault run cannot start a PostgreSQL cluster here: {why}")
    done = subprocess.run(
        [sys.executable, "-m", "bench.faults", "--no-record"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = f"{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    assert done.returncode == 0, output
    assert "| acknowledged but not in the database | 0 " in done.stdout, output
    assert "faults: every check passed" in done.stdout, output
