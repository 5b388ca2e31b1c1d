"""The site's periodic tasks: `django.tasks` has no schedule, so each periodic task queues its next run.
Core's own: pruning the REST writes' idempotency keys (core/idempotency.py)."""

from __future__ import annotations

from datetime import timedelta

from django.tasks import Task, task
from django.utils import timezone


def keep_one_queued(periodic: Task, *, after: timedelta = timedelta(0)) -> None:
    """Queue a run of the argument-less task `periodic` in `after`, unless one is queued already.

    The task framework has no schedule: a periodic task queues its own next run, and `migrate` (every
    deploy) queues a first one should the chain ever break. Checking first keeps it to one chain
    however often `migrate` runs.
    """
    from django.tasks import TaskResultStatus  # noqa: PLC0415 (app loading: the backend's model needs the apps ready)
    from django_tasks_db.models import DBTaskResult  # noqa: PLC0415 (app loading: the backend's model needs the apps ready)

    queued = DBTaskResult.objects.filter(task_path=periodic.module_path, status=TaskResultStatus.READY)
    if not queued.exists():
        periodic.using(run_after=timezone.now() + after).enqueue()


#: How often the worker deletes the idempotency keys past IDEMPOTENCY_KEY_HOURS.
IDEMPOTENCY_SWEEP = timedelta(hours=1)


@task()
def prune_idempotency_keys() -> None:
    """Delete the REST writes' idempotency keys older than IDEMPOTENCY_KEY_HOURS, then queue the next
    run (hourly)."""
    from .idempotency import prune  # noqa: PLC0415 (app loading: core's model needs the apps ready)

    prune()
    schedule_idempotency_sweep(after=IDEMPOTENCY_SWEEP)


def schedule_idempotency_sweep(*, after: timedelta = timedelta(0)) -> None:
    keep_one_queued(prune_idempotency_keys, after=after)
