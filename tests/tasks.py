"""Run the task queue in the test process, with django-tasks-db's own worker (batch mode).

Only tasks that are due run, as in production; a retry or an expiry scheduled for later stays queued.
Tests that depend on a separate worker process (killed, restarted) start `manage.py db_worker` instead.
"""

from __future__ import annotations

from django.tasks import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult


def run_tasks() -> int:
    """Run every due task (and those they enqueue, when due) until none is left; returns how many ran."""
    before = DBTaskResult.objects.exclude(status=TaskResultStatus.READY).count()
    Worker(
        queue_names=["default"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="test-process",
        excluded_queue_names=[],
    ).run()
    failed = list(
        DBTaskResult.objects.filter(status=TaskResultStatus.FAILED).values_list("traceback", flat=True)
    )
    assert not failed, f"a task failed:\n{failed[0]}"
    return DBTaskResult.objects.exclude(status=TaskResultStatus.READY).count() - before
