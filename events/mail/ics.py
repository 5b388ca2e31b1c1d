"""An event as an iCalendar file (RFC 5545), for the page's download and the confirmation e-mail.

Times are written in the site's time zone (Asia/Taipei) with its VTIMEZONE, so calendar programs show
the local time the organisers announced, and the UID is the event's public id, so a second import
updates the entry instead of duplicating it.
"""

from __future__ import annotations

from datetime import UTC
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone
from icalendar import Calendar
from icalendar import Event as CalendarEvent

from ..models import Event

PRODID = "-//AgentReady Events//agentready-events//EN"
UID_DOMAIN = "agentready-events"


def filename(event: Event) -> str:
    return f"{event.public_id}.ics"


def location_text(event: Event) -> str:
    """Venue and city, as a calendar's LOCATION line shows them."""
    parts = [event.venue, str(event.get_location_display())]
    return ", ".join(part for part in parts if part)


def event_calendar(event: Event, *, url: str = "") -> bytes:
    """The event as a one-entry calendar. `url` should be absolute (the event page)."""
    site_tz = ZoneInfo(settings.TIME_ZONE)
    entry = CalendarEvent()
    entry.add("uid", f"{event.public_id}@{UID_DOMAIN}")
    entry.add("dtstamp", (event.updated_at or timezone.now()).astimezone(UTC))
    entry.add("dtstart", event.starts_at.astimezone(site_tz))
    entry.add("dtend", event.ends_at.astimezone(site_tz))
    entry.add("summary", event.title)
    entry.add("location", location_text(event))
    entry.add("description", "\n\n".join(part for part in (event.summary, event.description) if part))
    entry.add("status", "CANCELLED" if event.is_cancelled else "CONFIRMED")
    if url:
        entry.add("url", url)

    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add_component(entry)
    calendar.add_missing_timezones()
    return calendar.to_ical()
