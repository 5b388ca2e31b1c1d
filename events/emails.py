"""E-mails to visitors. One function per message, so every path that registers sends the same mail."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import EmailMessage
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from . import ics
from .models import Registration


def site_url(path: str, *, base_url: str = "") -> str:
    """`path` made absolute with `base_url`, else the optional SITE_URL setting; relative otherwise."""
    base = (base_url or getattr(settings, "SITE_URL", "")).rstrip("/")
    return f"{base}{path}" if base else path


def send_registration_confirmation(registration: Registration, *, base_url: str = "") -> bool:
    """Mail the registered person a confirmation with the event's `.ics` attached.

    Call it once per new or re-activated registration, never for an "already registered" answer.
    Returns False (and sends nothing) when the account has no e-mail address. Uses the active
    language; `base_url` (e.g. `request.build_absolute_uri("/")`) makes the links absolute.
    """
    user = registration.user
    if not user.email:
        return False
    event = registration.event
    event_url = site_url(reverse("event-detail", kwargs={"event_id": event.public_id}), base_url=base_url)
    context = {
        "registration": registration,
        "event": event,
        "user": user,
        "event_url": event_url,
        "me_url": site_url(reverse("me"), base_url=base_url),
        "LANGUAGE_CODE": translation.get_language(),
    }
    subject = " ".join(render_to_string("events/email/registration_subject.txt", context).split())
    body = render_to_string("events/email/registration_body.txt", context)
    message = EmailMessage(
        subject=subject,
        body=body,
        to=[user.email],
        attachments=[(ics.filename(event), ics.event_calendar(event, url=event_url), "text/calendar")],
    )
    message.send()
    return True


def send_event_cancelled(registration: Registration, *, base_url: str = "") -> bool:
    """Tell a person whose registration ended because the organiser cancelled the event.

    Returns False (and sends nothing) when the account has no e-mail address.
    """
    user = registration.user
    if not user.email:
        return False
    event = registration.event
    context = {
        "event": event,
        "user": user,
        "event_url": site_url(
            reverse("event-detail", kwargs={"event_id": event.public_id}), base_url=base_url
        ),
        "list_url": site_url(reverse("event-list"), base_url=base_url),
    }
    subject = " ".join(render_to_string("events/email/event_cancelled_subject.txt", context).split())
    body = render_to_string("events/email/event_cancelled_body.txt", context)
    EmailMessage(subject=subject, body=body, to=[user.email]).send()
    return True
