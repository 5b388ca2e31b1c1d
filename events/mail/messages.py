"""E-mails to people, built from a `Notification` row (written by the worker's first attempt) when sent.

One builder per kind, so every path that causes a mail (page, API, tool, admin, task) sends the same
message. The mail is rendered at send time in the language the cause was made in; links are absolute
with SITE_URL. Its Message-ID comes from the notification's idempotency key, so even a resend after a
crash mid-send is recognisable as the same message.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from email.message import MIMEPart
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import EmailMessage
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from .. import qr
from ..choices import NotificationKind
from ..models import Notification
from . import ics


def site_url(path: str, *, base_url: str = "") -> str:
    """`path` made absolute with `base_url`, else the optional SITE_URL setting; relative otherwise."""
    base = (base_url or getattr(settings, "SITE_URL", "")).rstrip("/")
    return f"{base}{path}" if base else path


def build_message(notification: Notification) -> EmailMessage:
    """The e-mail `notification` stands for, in its language."""
    with translation.override(notification.language or settings.LANGUAGE_CODE):
        event = notification.event
        event_url = site_url(reverse("event-detail", kwargs={"event_id": event.public_id}))
        context: dict[str, Any] = {
            "event": event,
            "user": notification.user,
            "registration": notification.registration,
            "entry": notification.entry,
            "event_url": event_url,
            "me_url": site_url(reverse("me")),
            "list_url": site_url(reverse("event-list")),
            "LANGUAGE_CODE": translation.get_language(),
            "site_name": settings.SITE_NAME,
        }
        registration = notification.registration
        if registration is not None and registration.is_active and registration.ticket_code:
            context["ticket_code"] = registration.ticket_code  # the holder's own channel: shown as text
        if notification.entry is not None and notification.entry.expires_at is not None:
            context["expires_at"] = timezone.localtime(notification.entry.expires_at)
        name = TEMPLATES[NotificationKind(notification.kind)]
        subject = " ".join(render_to_string(f"events/email/{name}_subject.txt", context).split())
        body = render_to_string(f"events/email/{name}_body.txt", context)
        message = EmailMessage(subject=subject, body=body, to=[notification.email])
        ATTACH.get(NotificationKind(notification.kind), _nothing)(message, notification, event_url)
    digest = hashlib.sha256(notification.key.encode()).hexdigest()[:32]
    domain = urlsplit(site_url("/")).hostname or "localhost"
    message.extra_headers["Message-ID"] = f"<{digest}@{domain}>"
    return message


def _attach_calendar(message: EmailMessage, notification: Notification, event_url: str) -> None:
    event = notification.event
    message.attach(ics.filename(event), ics.event_calendar(event, url=event_url), "text/calendar")


def _attach_ticket(message: EmailMessage, notification: Notification, event_url: str) -> None:
    """The ticket's QR code as an inline image (Content-ID `ticket`), when the registration still holds
    a valid ticket at send time (one cancelled meanwhile sends none)."""
    registration = notification.registration
    if registration is None or not registration.is_active or not registration.ticket_code:
        return
    part = MIMEPart()
    part.set_content(
        qr.ticket_png(registration.ticket_code),
        maintype="image",
        subtype="png",
        disposition="inline",
        filename="ticket.png",
        cid=TICKET_CID,
    )
    message.attach(part)


def _attach_calendar_and_ticket(message: EmailMessage, notification: Notification, event_url: str) -> None:
    _attach_calendar(message, notification, event_url)
    _attach_ticket(message, notification, event_url)


def _nothing(message: EmailMessage, notification: Notification, event_url: str) -> None:
    return None


TICKET_CID = "<ticket@agentready-events>"


TEMPLATES = {
    NotificationKind.REGISTRATION_CONFIRMED: "registration",
    NotificationKind.WAITLIST_OFFER: "waitlist_offer",
    NotificationKind.OFFER_EXPIRED: "offer_expired",
    NotificationKind.EVENT_CANCELLED: "event_cancelled",
    NotificationKind.TICKET: "ticket",
}
ATTACH: dict[NotificationKind, Callable[[EmailMessage, Notification, str], None]] = {
    NotificationKind.REGISTRATION_CONFIRMED: _attach_calendar_and_ticket,
    NotificationKind.TICKET: _attach_ticket,
}
