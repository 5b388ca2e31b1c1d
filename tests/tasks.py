"""Run the task queue in the test process, with django-tasks-db's own worker (batch mode).

Only tasks that are due run, as in production; a retry or an expiry scheduled for later stays queued.
Tests that depend on a separate worker process (killed, restarted) start `manage.py db_worker` instead
(tests/events/test_worker.py), and tests of the app server start gunicorn (`start_gunicorn`), both on
the test database.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from unittest import mock

from django.tasks import TaskResultStatus
from django_tasks_db.management.commands import db_worker
from django_tasks_db.models import DBTaskResult


def run_tasks() -> int:
    """Run every due task (and those they enqueue, when due) until none is left; returns how many ran."""
    before = DBTaskResult.objects.exclude(status=TaskResultStatus.READY).count()
    # The worker closes "old" connections between tasks, as a request would; inside a test's
    # transaction that would close the test's own connection, so it is left open here.
    with mock.patch.object(db_worker, "close_old_connections"):
        db_worker.Worker(
            queue_names=["default"],
            interval=0,
            batch=True,
            backend_name="default",
            startup_delay=False,
            max_tasks=None,
            worker_id="test-process",
            excluded_queue_names=[],
        ).run()
    failed = DBTaskResult.objects.filter(status=TaskResultStatus.FAILED).values_list("traceback", flat=True)
    assert not failed, f"a task failed:\n{failed[0]}"
    return DBTaskResult.objects.exclude(status=TaskResultStatus.READY).count() - before


def database_url() -> str:
    """The test database as a DATABASE_URL, for a worker process started by a test."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def start_worker(**env: str):
    """`manage.py db_worker` as production runs it, on the test database, in its own process."""
    from django.conf import settings

    return subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.2"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DATABASE_URL": database_url(), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_gunicorn(*, workers: int = 1, **env: str) -> tuple[subprocess.Popen, str]:
    """`gunicorn config.wsgi` as production runs it, on the test database, ready (its /health
    answers); the process and its base URL. The caller stops it."""
    from django.conf import settings

    from harness.server import free_port

    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
        ],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DATABASE_URL": database_url(), "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            urllib.request.urlopen(f"{base}/health", timeout=2)
            return process, base
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"the app server on {base} did not start")
