"""Background work on Django's task framework (`django.tasks`, the django-tasks-db backend).

Tasks are enqueued inside the transaction of the change that needs them (the backend stores them in the
same database), and a worker runs them: `python manage.py db_worker`. The bodies import the use cases
when they run, because the use cases enqueue these tasks.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.tasks import task
from django.utils import timezone, translation

from core.tasks import keep_one_queued

from .choices import EventStatus, NotificationKind, PaymentStatus, RegistrationStatus
from .mail import outbox
from .models import Notification, Registration


@task()
def process_waitlist(event_pk: int) -> int:
    """End the event's due offers and offer the freed seats (enqueued to run when an offer expires)."""
    from .services.waitlist import process_waitlists  # noqa: PLC0415 (circular: tasks ↔ services)

    return process_waitlists(event_pks=[event_pk])


@task()
def sweep_waitlists() -> int:
    """Every WAITLIST_SWEEP_MINUTES: the same for every event with a due offer, so nothing depends
    on a page visit or on one expiry task; then schedule the next sweep."""
    from .services.waitlist import process_waitlists  # noqa: PLC0415 (circular: tasks ↔ services)

    done = process_waitlists()
    schedule_sweep(after=timedelta(minutes=settings.WAITLIST_SWEEP_MINUTES))
    return done


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
    """Notify every confirmed registration whose published event starts within REMINDER_HOURS (and has
    not started), whose person has not turned reminders off; returns how many were queued.

    Exactly once per registration and activation: the outbox's key names both (a registration
    re-activated later has a new ticket, so it gets a reminder of its own), and a second notify with
    the same key sends nothing. Those that have their reminder already are left out, so a run queues
    only new ones. Whether it still goes is checked again when it is sent (`messages.still_wanted`).
    The mail is in the person's last language: the one of the latest mail a change of theirs caused,
    else LANGUAGE_CODE (there is no stored per-person language).
    """
    already = Notification.objects.filter(
        kind=NotificationKind.REMINDER,
        registration=OuterRef("pk"),
        created_at__gte=Coalesce(OuterRef("ticket_issued_at"), OuterRef("created_at")),
    )
    last_language = (
        Notification.objects.filter(user=OuterRef("user"))
        .exclude(kind=NotificationKind.REMINDER)
        .order_by("-created_at", "-id")
        .values("language")[:1]
    )
    due = (
        Registration.objects.filter(
            status=RegistrationStatus.CONFIRMED,
            event__status=EventStatus.PUBLISHED,
            event__starts_at__gt=now,
            event__starts_at__lte=now + timedelta(hours=settings.REMINDER_HOURS),
        )
        .exclude(user__preferences__reminders=False)  # accounts.Preferences: reminders turned off
        .exclude(Exists(already))
        .annotate(last_language=Subquery(last_language))
        .select_related("user", "event")
        .order_by("event__starts_at", "pk")
    )
    queued = 0
    for registration in due:
        activation = registration.ticket_issued_at or registration.created_at
        with translation.override(registration.last_language or settings.LANGUAGE_CODE):
            queued += outbox.notify(
                NotificationKind.REMINDER,
                user=registration.user,
                event=registration.event,
                cause=f"reminder-{registration.pk}-{activation.isoformat()}",
                registration=registration,
            )
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
