"""Expired sessions are deleted by the task worker every SESSION_SWEEP_HOURS (accounts/tasks.py), and
`migrate` keeps exactly one run of each periodic task queued (core.tasks.keep_one_queued)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from accounts.tasks import clear_expired_personal_data, clear_expired_sessions, clear_oauth_leftovers
from core.tasks import prune_idempotency_keys
from events.tasks import send_reminders, sweep_waitlists
from tests.tasks import run_tasks, start_worker

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PERIODIC = (
    clear_expired_sessions,
    sweep_waitlists,
    clear_oauth_leftovers,
    clear_expired_personal_data,
    send_reminders,
    prune_idempotency_keys,
)


def queued(periodic) -> list[DBTaskResult]:
    return list(DBTaskResult.objects.filter(task_path=periodic.module_path, status=TaskResultStatus.READY))


def sessions(*, expired: int, live: int) -> None:
    now = timezone.now()
    for n in range(expired + live):
        Session.objects.create(
            session_key=f"{'expired' if n < expired else 'live'}-{n:032d}",
            session_data="",
            expire_date=now + (timedelta(hours=-1) if n < expired else timedelta(days=1)),
        )


def test_a_run_deletes_the_expired_sessions_only_and_queues_the_next_run_a_day_later(settings):
    settings.SESSION_SWEEP_HOURS = 24
    DBTaskResult.objects.all().delete()
    sessions(expired=3, live=2)
    clear_expired_sessions.enqueue()

    assert run_tasks() == 1

    assert sorted(key.split("-")[0] for key in Session.objects.values_list("session_key", flat=True)) == [
        "live",
        "live",
    ]
    [following] = queued(clear_expired_sessions)
    assert timedelta(hours=23, minutes=59) < following.run_after - timezone.now() <= timedelta(hours=24)


@pytest.mark.parametrize("periodic", PERIODIC, ids=lambda task: task.name)
def test_migrate_queues_one_run_however_often_it_runs(periodic):
    DBTaskResult.objects.filter(task_path=periodic.module_path).delete()
    call_command("migrate", verbosity=0)
    call_command("migrate", verbosity=0)

    [run] = queued(periodic)
    assert run.run_after is None or run.run_after <= timezone.now()  # due at once after a deploy


@pytest.mark.slow  # starts a process or a server
@pytest.mark.django_db(transaction=True)
def test_the_worker_process_clears_expired_sessions_after_migrate():
    call_command("migrate", verbosity=0)  # queues the first run, as every deploy does
    sessions(expired=2, live=1)
    worker = start_worker()
    try:
        deadline = time.monotonic() + 30
        while Session.objects.count() != 1 and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert list(Session.objects.values_list("session_key", flat=True)) == [f"live-{2:032d}"]
    assert len(queued(clear_expired_sessions)) == 1  # and the next run is waiting
