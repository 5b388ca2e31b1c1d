"""Background work on Django's task framework (`django.tasks`, the django-tasks-db backend).

Tasks are enqueued inside the transaction of the change that needs them (the backend stores them in the
same database), and a worker runs them: `python manage.py db_worker`. A task that changes the domain's
rows is the site acting on its own: it performs an action row as the declared system actor
(`events.actions.system_caller`, channel `system`, the task named as the row's client), so each of its
writes has its Activity row like any other. The bodies import the actions when they run, because the
use cases enqueue these tasks (a declared ignore of the layers contract, pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.tasks import task
from django.utils import timezone

from core.tasks import keep_one_queued

from .selectors import events_with_due_reminders, waitlists_with_work


@task()
def process_waitlist(event_pk: int) -> int:
    """End the event's due offers and offer the freed seats (enqueued to run when an offer expires)."""
    return offer_due_seats(event_pks=[event_pk], client="process_waitlist")


@task()
def sweep_waitlists() -> int:
    """Every WAITLIST_SWEEP_MINUTES: the same for every event with a due offer or a free seat for the
    people waiting, so nothing depends on a page visit or on one expiry task; then schedule the next
    sweep."""
    done = offer_due_seats(client="sweep_waitlists")
    schedule_sweep(after=timedelta(minutes=settings.WAITLIST_SWEEP_MINUTES))
    return done


def offer_due_seats(
    *, now: datetime | None = None, event_pks: Iterable[int] | None = None, client: str = "sweep_waitlists"
) -> int:
    """The worker's waiting-list work: `offer_free_seats` performed as the declared system actor on each
    event that has some now (`selectors.waitlists_with_work`: an offer whose time is up, or a free
    seat and people waiting), each in its own transaction with its Activity row, in one order (no
    lock-order deadlock). Returns the seats offered. `now` is the worker's clock (tests move it)."""
    from .actions import ACTIONS, perform, system_caller  # noqa: PLC0415 (circular: tasks ↔ actions ↔ services)

    now = now or timezone.now()
    offered = 0
    for event_id in waitlists_with_work(now=now, event_pks=event_pks):
        row = perform(
            ACTIONS["offer_free_seats"], system_caller(client), {"event_id": event_id}, options={"now": now}
        )
        if row.error is None:
            offered += row.result.offered
    return offered


def schedule_sweep(*, after: timedelta = timedelta(0)) -> None:
    """Make sure one sweep is queued (called after `migrate` and by each sweep for the next one)."""
    keep_one_queued(sweep_waitlists, after=after)


@task()
def send_reminders() -> int:
    """Every REMINDER_SWEEP_MINUTES: queue the reminders now due, then schedule the next run."""
    queued = queue_due_reminders(now=timezone.now())
    schedule_reminders(after=timedelta(minutes=settings.REMINDER_SWEEP_MINUTES))
    return queued


def schedule_reminders(*, after: timedelta = timedelta(0)) -> None:
    """Make sure one reminder run is queued (called after `migrate` and by each run for the next one)."""
    keep_one_queued(send_reminders, after=after)


def queue_due_reminders(*, now: datetime) -> int:
    """The `send_reminders` row performed as the declared system actor for each event with reminders
    due (`selectors.due_reminders`), each with its Activity row; returns how many were queued. A run
    queues only new ones: exactly once per registration and activation (the row says how)."""
    from .actions import ACTIONS, perform, system_caller  # noqa: PLC0415 (circular: tasks ↔ actions ↔ services)

    queued = 0
    for event_id in events_with_due_reminders(now=now):
        row = perform(
            ACTIONS["send_reminders"],
            system_caller("send_reminders"),
            {"event_id": event_id},
            options={"now": now},
        )
        if row.error is None:
            queued += row.result.queued
    return queued
