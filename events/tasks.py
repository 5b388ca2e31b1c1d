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
from django.db.models import Exists, OuterRef, Subquery
from django.tasks import task
from django.utils import timezone, translation

from core.tasks import keep_one_queued

from .choices import NotificationKind, PaymentStatus, RegistrationStatus
from .mail import outbox
from .models import Notification, Registration
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


def _last_language() -> Subquery:
    """A registration's person's last language: the one of the latest mail a change of theirs caused."""
    return Subquery(
        Notification.objects.filter(user=OuterRef("user"))
        .exclude(kind__in=[NotificationKind.REMINDER, NotificationKind.PAYMENT_REMINDER])
        .order_by("-created_at", "-id")
        .values("language")[:1]
    )


@task()
def tell_expired_payments(registration_ids: list[int]) -> int:
    """E-mail each person whose registration the payment sweep expired (queued once per batch, so the
    sweep's statements do not grow with it): one outbox mail each, in their last language."""
    expired = (
        Registration.objects.filter(pk__in=registration_ids, status=RegistrationStatus.EXPIRED)
        .annotate(last_language=_last_language())
        .select_related("user", "event")
    )
    told = 0
    for registration in expired:
        with translation.override(registration.last_language or settings.LANGUAGE_CODE):
            told += outbox.notify(
                NotificationKind.PAYMENT_EXPIRED,
                user=registration.user,
                event=registration.event,
                cause=f"payment-expired-{registration.pk}",
                registration=registration,
            )
    return told


def queue_payment_reminders(*, now: datetime) -> int:
    """Remind each person whose transfer is still awaited PAYMENT_REMINDER_HOURS before its deadline
    (once per registration and deadline: the outbox's key names both); returns how many were queued."""
    already = Notification.objects.filter(kind=NotificationKind.PAYMENT_REMINDER, registration=OuterRef("pk"))
    due = (
        Registration.objects.filter(
            status=RegistrationStatus.PENDING_PAYMENT,
            payment_status=PaymentStatus.AWAITING,
            payment_due_at__gt=now,
            payment_due_at__lte=now + timedelta(hours=settings.PAYMENT_REMINDER_HOURS),
        )
        .exclude(Exists(already))
        .annotate(last_language=_last_language())
        .select_related("user", "event")
        .order_by("payment_due_at", "pk")
    )
    queued = 0
    for registration in due:
        assert registration.payment_due_at is not None  # the filter's
        with translation.override(registration.last_language or settings.LANGUAGE_CODE):
            queued += outbox.notify(
                NotificationKind.PAYMENT_REMINDER,
                user=registration.user,
                event=registration.event,
                cause=f"payment-reminder-{registration.pk}-{registration.payment_due_at.isoformat()}",
                registration=registration,
            )
    return queued
