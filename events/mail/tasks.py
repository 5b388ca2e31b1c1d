"""The outbox's tasks under the path they had before they moved into events/mail/outbox.py: task rows
queued then name `events.mail.tasks.open_notification` or `…send_notification`, and the worker finds
their task here. New rows name `events.mail.outbox.…`."""

from __future__ import annotations

from .outbox import open_notification, send_notification

__all__ = ["open_notification", "send_notification"]
