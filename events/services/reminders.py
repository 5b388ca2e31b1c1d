"""Reminders: the worker queues each confirmed attendee's reminder before their event starts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.utils import timezone, translation

from core.errors import PermissionDenied
from core.transactions import atomic_use_case
from core.visitors import Visitor

from ..choices import NotificationKind
from ..errors import EventNotFound
from ..mail import outbox
from ..models import Event
from ..selectors import due_reminders


@dataclass(frozen=True)
class RemindersResult:
    event: Event
    queued: int  # reminders queued by this call

    @property
    def outcome(self) -> str:
        return "OK" if self.queued else "UNCHANGED"


@atomic_use_case
def send_reminders(*, visitor: Visitor, event_id: str, now: datetime | None = None) -> RemindersResult:
    """Queue the reminders of `event_id` now due (`selectors.due_reminders`: its confirmed attendees
    within REMINDER_HOURS of its start who have not turned reminders off and have none for this
    registration yet). The site's own work: only the declared system actor (the worker) may.

    Exactly once per registration and activation: the outbox's key names both, and a second notify with
    the same key sends nothing. Whether it still goes is checked again when it is sent
    (`messages.still_wanted`). The mail is in the person's last language (`due_reminders`), else
    LANGUAGE_CODE (there is no stored per-person language).
    """
    if not visitor.system:
        raise PermissionDenied("Only the site sends reminders.")
    event = Event.objects.filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    now = now or timezone.now()
    queued = 0
    for registration in due_reminders(now=now).filter(event=event):
        activation = registration.ticket_issued_at or registration.created_at
        language = getattr(registration, "last_language", None)  # annotated by `due_reminders`
        with translation.override(language or settings.LANGUAGE_CODE):
            queued += outbox.notify(
                NotificationKind.REMINDER,
                user=registration.user,
                event=registration.event,
                cause=f"reminder-{registration.pk}-{activation.isoformat()}",
                registration=registration,
            )
    return RemindersResult(event=event, queued=queued)
