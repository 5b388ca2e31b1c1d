"""Background work on Django's task framework (`django.tasks`, the django-tasks-db backend).

Tasks are enqueued inside the transaction of the change that needs them (the backend stores them in the
same database), and a worker runs them: `python manage.py db_worker`. The bodies import the use cases
when they run, because the use cases enqueue these tasks.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.tasks import task

from core.tasks import keep_one_queued


@task()
def process_waitlist(event_pk: int) -> int:
    """End the event's due offers and offer the freed seats (enqueued to run when an offer expires)."""
    from .services import process_waitlists  # noqa: PLC0415 (circular: tasks ↔ services)

    return process_waitlists(event_pks=[event_pk])


@task()
def sweep_waitlists() -> int:
    """Every WAITLIST_SWEEP_MINUTES: the same for every event with a due offer, so nothing depends
    on a page visit or on one expiry task; then schedule the next sweep."""
    from .services import process_waitlists  # noqa: PLC0415 (circular: tasks ↔ services)

    done = process_waitlists()
    schedule_sweep(after=timedelta(minutes=settings.WAITLIST_SWEEP_MINUTES))
    return done


def schedule_sweep(*, after: timedelta = timedelta(0)) -> None:
    """Make sure one sweep is queued (called after `migrate` and by each sweep for the next one)."""
    keep_one_queued(sweep_waitlists, after=after)
