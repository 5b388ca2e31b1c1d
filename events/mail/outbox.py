"""The e-mail outbox (layer 2 helper): an e-mail is queued in the same transaction as the change that
causes it. If the change rolls back, there is no mail; if it commits, the worker will send it.

The queued task is the outbox: `notify` writes one row, the task's, in the caller's transaction (the
task backend keeps its tasks in the same database). The worker then writes the `Notification` row, once
per key, with the change's time, and makes the first attempt. So a change that causes a mail costs its
request one INSERT, not two, and the admin lists a mail from its first attempt on (within a second of
the change while the worker runs).

Sending is at-least-once with a guard against doubles: each attempt first records itself (status
`sending`) and enqueues the next attempt, in one short transaction, then talks to the mail server
outside any transaction. So a failed attempt is retried with backoff (NOTIFICATION_RETRY_DELAYS, more
than a day in all) and a worker killed mid-send leaves the next attempt queued already; an attempt that
finds the row `sent` does nothing, and one that finds another attempt still in flight (younger than
NOTIFICATION_SEND_LEASE) waits for it. After the last attempt fails, the row is `failed` with the error,
in the admin. The one window left is a crash between the server's "accepted" and our "sent" mark; the
resend then carries the same Message-ID. An attempt that finds its mail no longer wanted
(`messages.still_wanted`: a reminder whose registration or event was cancelled since) marks it
`skipped` and sends nothing, then or later.

Its two tasks (`django.tasks`) live here with what they run: `open_notification` (a mail's row and
first attempt) and `send_notification` (one more attempt). Rows queued before they moved name
`events.mail.tasks.…`, which that module still answers (`QUEUED_MAIL_PATHS`).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.tasks import task
from django.utils import timezone, translation

from ..choices import NotificationKind, NotificationStatus
from ..models import Event, Notification, Registration, WaitlistEntry
from . import messages

logger = logging.getLogger(__name__)


def notify(
    kind: NotificationKind,
    *,
    user,
    event: Event,
    cause: str,
    registration: Registration | None = None,
    entry: WaitlistEntry | None = None,
) -> bool:
    """Queue one e-mail to `user` about `event`, once per (`kind`, `cause`, recipient).

    Call it inside the transaction of the change (`cause` names that change). Returns False when the
    account has no e-mail address. The address, the language and the time are the change's: a mail
    says what the person saw when they acted, however late the worker takes it.
    """
    if not user.email:
        return False
    fields = {
        "kind": str(kind),
        "user_id": user.pk,
        "email": user.email,
        "event_id": event.pk,
        "registration_id": registration.pk if registration else None,
        "entry_id": entry.pk if entry else None,
        "language": translation.get_language() or settings.LANGUAGE_CODE,
        "created_at": timezone.now().isoformat(),
    }
    open_notification.enqueue(f"{kind}:{cause}:user-{user.pk}", fields)
    return True


@task()
def open_notification(key: str, fields: dict[str, Any]) -> str:
    """Write an outbox e-mail's row and make its first attempt (queued by `notify`)."""
    return open_and_deliver(key, fields)


@task()
def send_notification(notification_id: int) -> str:
    """One more attempt at an outbox e-mail (a retry, or the admin's "send again")."""
    return deliver(notification_id)


#: The task paths an `open_notification` row may name: its own, and the one it had before the tasks
#: moved into this module (events/mail/tasks.py answers it), for rows queued then.
QUEUED_MAIL_PATHS = (open_notification.module_path, "events.mail.tasks.open_notification")


def open_and_deliver(key: str, fields: dict[str, Any]) -> str:
    """The `open_notification` task: write the `Notification` row for `key`, then make its first attempt.

    A second task for a key that has its row already (the same change notified twice) does nothing:
    the first one's attempts carry that mail.
    """
    values = {**fields, "created_at": datetime.fromisoformat(fields["created_at"])}
    try:
        notification, created = Notification.objects.get_or_create(key=key, defaults=values)
    except IntegrityError:  # its event, person, registration or entry was deleted since: nobody to tell
        logger.info("Notification %s is not sent: what it is about no longer exists", key)
        return "nothing to do"
    if not created:
        return "nothing to do"
    return deliver(notification.pk)


def retry_delays() -> list[timedelta]:
    return [timedelta(seconds=seconds) for seconds in settings.NOTIFICATION_RETRY_DELAYS]


def lease() -> timedelta:
    return timedelta(seconds=settings.NOTIFICATION_SEND_LEASE)


def deliver(notification_id: int) -> str:
    """One attempt to send a notification (the `send_notification` task); returns what happened."""
    attempt = _claim(notification_id, now=timezone.now())
    if attempt is None:
        return "nothing to do"
    try:
        messages.build_message(attempt).send()
    except Exception as error:  # any failure of the mail server or the network: try again later
        logger.warning("Sending notification %s failed (attempt %s): %s", attempt.pk, attempt.attempts, error)
        return _record_failure(attempt, error)
    Notification.objects.filter(pk=attempt.pk).update(
        status=NotificationStatus.SENT, sent_at=timezone.now(), last_error=""
    )
    return "sent"


@transaction.atomic
def _claim(notification_id: int, *, now: datetime) -> Notification | None:
    """Record the attempt and enqueue the next one, or say there is nothing to do now."""
    notification = (
        Notification.objects.select_for_update(of=("self",))
        .select_related("user", "event", "registration", "entry")
        .filter(pk=notification_id)
        .first()
    )
    if notification is None or notification.status in (
        NotificationStatus.SENT,
        NotificationStatus.FAILED,
        NotificationStatus.SKIPPED,
    ):
        return None
    delays = retry_delays()
    if notification.status == NotificationStatus.SENDING and notification.claimed_at:
        in_flight_until = notification.claimed_at + lease()
        if in_flight_until > now:  # another attempt may still be talking to the server
            _schedule(notification, at=in_flight_until)
            return None
        if notification.attempts > len(delays):  # the worker died during the last attempt
            _end(notification, "The worker stopped during the last attempt.")
            return None
    if not messages.still_wanted(notification, now=now):
        _end(notification, "No longer wanted when its turn came.", status=NotificationStatus.SKIPPED)
        return None
    notification.attempts += 1
    notification.status = NotificationStatus.SENDING
    notification.claimed_at = now
    notification.save(update_fields=["attempts", "status", "claimed_at"])
    # The next attempt is queued before this one starts, so a crash cannot lose the mail. After the
    # last attempt, a final check marks the row failed if that attempt never finished.
    after = delays[notification.attempts - 1] if notification.attempts <= len(delays) else lease()
    _schedule(notification, at=now + max(after, timedelta(0)))
    return notification


def _schedule(notification: Notification, *, at: datetime) -> None:
    send_notification.using(run_after=at).enqueue(notification.pk)


def _record_failure(notification: Notification, error: Exception) -> str:
    last = notification.attempts > len(retry_delays())
    Notification.objects.filter(pk=notification.pk, status=NotificationStatus.SENDING).update(
        status=NotificationStatus.FAILED if last else NotificationStatus.PENDING,
        last_error=f"{type(error).__name__}: {error}"[:2000],
    )
    return "failed" if last else "will retry"


def _end(notification: Notification, reason: str, *, status=NotificationStatus.FAILED) -> None:
    notification.status = status
    notification.last_error = reason
    notification.save(update_fields=["status", "last_error"])


@transaction.atomic
def send_again(notifications) -> int:
    """Give failed notifications a fresh series of attempts (an organiser's choice, after fixing the
    mail server); returns how many were queued."""
    pks = list(notifications.filter(status=NotificationStatus.FAILED).values_list("pk", flat=True))
    Notification.objects.filter(pk__in=pks).update(
        status=NotificationStatus.PENDING, attempts=0, claimed_at=None
    )
    for pk in pks:
        send_notification.enqueue(pk)
    return len(pks)
