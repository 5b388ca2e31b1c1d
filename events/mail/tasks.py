"""The outbox's tasks (`django.tasks`): each e-mail's first attempt and its retries. Queued inside the
transaction of the change that needs them; a worker runs them (`manage.py db_worker`)."""

from __future__ import annotations

from typing import Any

from django.tasks import task


@task()
def open_notification(key: str, fields: dict[str, Any]) -> str:
    """Write an outbox e-mail's row and make its first attempt (queued by `events.outbox.notify`)."""
    from .outbox import open_and_deliver  # noqa: PLC0415 (circular: outbox ↔ tasks)

    return open_and_deliver(key, fields)


@task()
def send_notification(notification_id: int) -> str:
    """One more attempt at an outbox e-mail (a retry, or the admin's "send again"; see `events.outbox`)."""
    from .outbox import deliver  # noqa: PLC0415 (circular: outbox ↔ tasks)

    return deliver(notification_id)
