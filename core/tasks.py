"""The site's periodic tasks: `django.tasks` has no schedule, so each periodic task queues its next run."""

from __future__ import annotations

from datetime import timedelta

from django.tasks import Task
from django.utils import timezone


def keep_one_queued(periodic: Task, *, after: timedelta = timedelta(0)) -> None:
    """Queue a run of the argument-less task `periodic` in `after`, unless one is queued already.

    The task framework has no schedule: a periodic task queues its own next run, and `migrate` (every
    deploy) queues a first one should the chain ever break. Checking first keeps it to one chain
    however often `migrate` runs.
    """
    from django.tasks import TaskResultStatus  # noqa: PLC0415 (app loading: core holds no model; the backend's model needs the apps ready)
    from django_tasks_db.models import DBTaskResult  # noqa: PLC0415 (app loading: core holds no model; the backend's model needs the apps ready)

    queued = DBTaskResult.objects.filter(task_path=periodic.module_path, status=TaskResultStatus.READY)
    if not queued.exists():
        periodic.using(run_after=timezone.now() + after).enqueue()
