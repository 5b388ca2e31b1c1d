"""`make run`: one command serves the site (and MCP at /mcp) and runs one task worker; Ctrl-C stops both.

Runs the Makefile target itself on a throw-away SQLite file (DATABASE_URL), so the developer's
db.sqlite3 is untouched. The worker is seen at work: an e-mail queued by a registration is printed by
the console mail backend in the command's output.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.own_database]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _processes(pattern: str) -> list[str]:
    found = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True).stdout.splitlines()
    return [line for line in found if "pgrep" not in line]


def test_make_run_serves_the_site_with_a_worker_and_ctrl_c_stops_both(tmp_path: Path):
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'run.sqlite3'}", "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "run.log"
    process = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as a terminal gives it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    workers: list[int] = []
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/events/", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise AssertionError(f"make run did not serve the site:\n{log.read_text()[-3000:]}")
        assert _processes(f"runserver 127.0.0.1:{port}")
        listed = urllib.request.urlopen(
            urllib.request.Request(
                f"http://127.0.0.1:{port}/mcp",
                data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode(),
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2025-11-25",
                },
            ),
            timeout=10,
        )
        tools = [tool["name"] for tool in json.load(listed)["result"]["tools"]]
        assert "search_events" in tools and "register_event" in tools  # /mcp on the same port
        worker_group = os.getpgid(process.pid)
        workers = [
            int(line.split()[0]) for line in _processes("manage.py db_worker") if _group(line) == worker_group
        ]
        assert workers, "make run started no task worker"

        # A registration made on this site queues its confirmation; make run's worker sends it.
        register = (
            "from events import actions; from core.visitors import Visitor; "
            "from django.contrib.auth.models import User; from events.models import Event; "
            "event = Event.objects.published().upcoming().filter(capacity__isnull=True).first(); "
            "actions.call('register_event', visitor=Visitor(user=User.objects.get(username='demo')), "
            "channel='api', event_id=event.public_id); print(event.title)"
        )
        title = (
            subprocess.run(
                [sys.executable, "manage.py", "shell", "-c", register],
                cwd=settings.BASE_DIR,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        deadline = time.monotonic() + 30
        while "To: demo@" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.3)
        assert "To: demo@" in log.read_text(), log.read_text()[-3000:]
        assert title
    finally:
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        process.wait(timeout=30)
    time.sleep(1)
    assert not _processes(f"runserver 127.0.0.1:{port}")
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], "the worker outlived make run"


def _group(line: str) -> int | None:
    try:
        return os.getpgid(int(line.split()[0]))
    except (ProcessLookupError, ValueError):
        return None
