"""The periodic clean-up of sessions, on the task worker (`manage.py db_worker`).

Django deletes an expired session only when someone runs `manage.py clearsessions`; nothing would, so
the sessions table would keep every visit's row for ever. This task does what that command does, every
SESSION_SWEEP_HOURS, and queues its next run.
"""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module

from django.conf import settings
from django.tasks import task

from core.tasks import keep_one_queued


@task()
def clear_expired_sessions() -> None:
    """Delete the expired sessions (the session engine's own `clear_expired`), then queue the next run."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
    schedule_sweep(after=timedelta(hours=settings.SESSION_SWEEP_HOURS))


def schedule_sweep(*, after: timedelta = timedelta(0)) -> None:
    """Make sure one run is queued (called after `migrate` and by each run for the next one)."""
    keep_one_queued(clear_expired_sessions, after=after)
