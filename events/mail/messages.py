"""E-mails to people, built from a `Notification` row (written by the worker's first attempt) when sent.

One builder per kind, so every path that causes a mail (page, API, tool, admin, task) sends the same
message. The mail is rendered at send time in the language the cause was made in; links are absolute
with SITE_URL. Its Message-ID comes from the notification's idempotency key, so even a resend after a
crash mid-send is recognisable as the same message.

Some mails are worth sending only while what they are about still holds: `still_wanted` says, for
the outbox's every attempt, whether such a mail should still go (a reminder, once its registration or
its event is cancelled, or its person turned reminders off, should not).
"""

from __future__ import annotations

import email.policy
import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta
from email.message import MIMEPart
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import signing
from django.core.exceptions import ObjectDoesNotExist
from django.core.mail import EmailMessage
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from .. import payment_methods, qr
from ..choices import EventStatus, NotificationKind, PaymentStatus
from ..models import Notification
from ..questions import shown_answers
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
        if notification.kind == NotificationKind.REMINDER:
            context["unsubscribe_url"] = unsubscribe_url(notification.user)
        registration = notification.registration
        if registration is not None and registration.is_active and registration.ticket_code:
            context["ticket_code"] = registration.ticket_code  # the holder's own channel: shown as text
        if registration is not None:
            context["answers"] = shown_answers(registration, translation.get_language())
            if registration.amount:
                context["payment_url"] = site_url(reverse("payment", kwargs={"event_id": event.public_id}))
                context["instructions"] = payment_methods.provider(registration.payment_method).instructions()
                context["due_at"] = (
                    timezone.localtime(registration.payment_due_at) if registration.payment_due_at else None
                )
        if notification.entry is not None and notification.entry.expires_at is not None:
            context["expires_at"] = timezone.localtime(notification.entry.expires_at)
        name = TEMPLATES[NotificationKind(notification.kind)]
        subject = " ".join(render_to_string(f"events/email/{name}_subject.txt", context).split())
        body = render_to_string(f"events/email/{name}_body.txt", context)
        message = SiteMessage(subject=subject, body=body, to=[notification.email])
        ATTACH.get(NotificationKind(notification.kind), _nothing)(message, notification, event_url)
    digest = hashlib.sha256(notification.key.encode()).hexdigest()[:32]
    domain = urlsplit(site_url("/")).hostname or "localhost"
    message.extra_headers["Message-ID"] = f"<{digest}@{domain}>"
    return message


class SiteMessage(EmailMessage):
    """Django's message, but the headers in ONE_LINE are written on one line as they are: Python's
    e-mail policy would turn a value too long to fold (a URL) into RFC 2047 encoded words, which no
    mail client reads as `List-Unsubscribe` (RFC 2369: a URL in angle brackets)."""

    def message(self, *, policy=email.policy.default):
        message = super().message(policy=policy)
        for name in ONE_LINE:
            value = message[name]
            if value is not None:
                message.replace_header(name, _OneLine(name, str(value)))
        return message


ONE_LINE = ("List-Unsubscribe", "List-Unsubscribe-Post")


class _OneLine(str):
    """A header value the e-mail policy writes as given (it uses an object's own `fold`)."""

    name: str

    def __new__(cls, name: str, value: str) -> _OneLine:
        header = super().__new__(cls, value)
        header.name = name
        return header

    def fold(self, *, policy) -> str:
        return f"{self.name}: {self}{policy.linesep}"


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


def _unsubscribe_headers(message: EmailMessage, notification: Notification, event_url: str) -> None:
    """One-click unsubscribe (RFC 8058): a mail client POSTs `List-Unsubscribe=One-Click` to the URL."""
    message.extra_headers["List-Unsubscribe"] = f"<{unsubscribe_url(notification.user)}>"
    message.extra_headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"


#: The salt of the reminders' unsubscribe tokens: a token signed for anything else never verifies here.
UNSUBSCRIBE_SALT = "events.mail.reminders-unsubscribe"


#: How long an unsubscribe link works: a reminder's link is used within days of the mail, and an old
#: one found in a mailbox, a forwarded mail or a log should not keep the authority for ever.
UNSUBSCRIBE_MAX_AGE = timedelta(days=60)


def unsubscribe_token(user) -> str:
    """A signed, timestamped token naming `user`: the authority to turn their reminders off (no
    sign-in needed) for UNSUBSCRIBE_MAX_AGE, or until SECRET_KEY changes. A secret: masked in log
    lines (`config.settings.MaskSecretPaths`)."""
    return signing.TimestampSigner(salt=UNSUBSCRIBE_SALT).sign(str(user.pk))


def unsubscribed_user_id(token: str) -> int | None:
    """The id of the person `token` names, or None when it is not one of ours or too old."""
    try:
        return int(signing.TimestampSigner(salt=UNSUBSCRIBE_SALT).unsign(token, max_age=UNSUBSCRIBE_MAX_AGE))
    except (signing.BadSignature, ValueError):  # SignatureExpired is a BadSignature
        return None


def unsubscribe_url(user) -> str:
    return site_url(reverse("reminders-unsubscribe", kwargs={"token": unsubscribe_token(user)}))


def reminders_on(user) -> bool:
    """Whether `user` wants reminders: on unless their preferences (accounts) say off."""
    try:
        return bool(user.preferences.reminders)
    except ObjectDoesNotExist:  # no preferences row: the defaults
        return True


def still_wanted(notification: Notification, *, now: datetime) -> bool:
    """Whether this notification should still be sent (checked by every attempt, before sending)."""
    check = STILL_WANTED.get(NotificationKind(notification.kind))
    return check is None or check(notification, now)


def _reminder_wanted(notification: Notification, now: datetime) -> bool:
    """A reminder goes while its registration is confirmed in the same activation (one re-activated
    since has its own reminder), its event is published and has not started, and its person wants
    reminders."""
    registration, event = notification.registration, notification.event
    return (
        registration is not None
        and registration.is_active
        and (
            registration.ticket_issued_at is None or registration.ticket_issued_at <= notification.created_at
        )
        and event.status == EventStatus.PUBLISHED
        and not event.has_started(now)
        and reminders_on(notification.user)
    )


def _payment_reminder_wanted(notification: Notification, now: datetime) -> bool:
    """A payment reminder goes while the payment is still awaited and its deadline is ahead."""
    registration = notification.registration
    return (
        registration is not None
        and registration.is_pending_payment
        and registration.payment_status == PaymentStatus.AWAITING
        and registration.payment_due_at is not None
        and registration.payment_due_at > now
    )


def _nothing(message: EmailMessage, notification: Notification, event_url: str) -> None:
    return None


TICKET_CID = "<ticket@agentready-events>"


TEMPLATES = {
    NotificationKind.REGISTRATION_CONFIRMED: "registration",
    NotificationKind.REGISTRATION_PENDING: "registration_pending",
    NotificationKind.REGISTRATION_APPROVED: "registration_approved",
    NotificationKind.REGISTRATION_DECLINED: "registration_declined",
    NotificationKind.WAITLIST_OFFER: "waitlist_offer",
    NotificationKind.OFFER_EXPIRED: "offer_expired",
    NotificationKind.EVENT_CANCELLED: "event_cancelled",
    NotificationKind.TICKET: "ticket",
    NotificationKind.REMINDER: "reminder",
    NotificationKind.PAYMENT_DUE: "payment_due",
    NotificationKind.PAYMENT_REMINDER: "payment_reminder",
    NotificationKind.PAYMENT_EXPIRED: "payment_expired",
    NotificationKind.PAYMENT_CONFIRMED: "payment_confirmed",
}
ATTACH: dict[NotificationKind, Callable[[EmailMessage, Notification, str], None]] = {
    NotificationKind.REGISTRATION_CONFIRMED: _attach_calendar_and_ticket,
    NotificationKind.REGISTRATION_APPROVED: _attach_calendar_and_ticket,
    NotificationKind.PAYMENT_CONFIRMED: _attach_calendar_and_ticket,
    NotificationKind.TICKET: _attach_ticket,
    NotificationKind.REMINDER: _unsubscribe_headers,
}
STILL_WANTED: dict[NotificationKind, Callable[[Notification, datetime], bool]] = {
    NotificationKind.REMINDER: _reminder_wanted,
    NotificationKind.PAYMENT_REMINDER: _payment_reminder_wanted,
}
