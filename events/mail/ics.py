"""Events as iCalendar (RFC 5545): one event's file (the page's download, the confirmation e-mail) and
the calendar feeds (`events/web/feeds.py`: a person's secret feed, the public search feed).

One entry per event everywhere, built by `_entry`: its UID is the event's public id, so a second
import or the next refresh of a feed updates the entry instead of duplicating it; its SEQUENCE and
LAST-MODIFIED follow the newest change (`sequence`, `last_modified`), so calendar programs take the
new version. The single file writes local times (Asia/Taipei) with their VTIMEZONE, as the organisers
announced them; the feeds write UTC (no VTIMEZONE to get wrong across a whole calendar).
The icalendar package folds lines at 75 octets and ends them with CRLF.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone
from icalendar import Calendar, Timezone, vDuration, vText
from icalendar import Event as CalendarEvent

from ..models import Event

UID_DOMAIN = "agentready-events"


def prodid() -> str:
    """The calendar's PRODID (RFC 5545 3.7.3): who wrote it (SITE_NAME) and the product's fixed slug."""
    return f"-//{settings.SITE_NAME}//{UID_DOMAIN}//EN"


def filename(event: Event) -> str:
    return f"{event.public_id}.ics"


def uid(event: Event) -> str:
    """The event's UID in every calendar file the site writes (never reused: nor is the public id)."""
    return f"{event.public_id}@{UID_DOMAIN}"


def location_text(event: Event) -> str:
    """Venue and city, as a calendar's LOCATION line shows them."""
    parts = [event.venue, str(event.get_location_display())]
    return ", ".join(part for part in parts if part)


def last_modified(event: Event, changed_at: datetime | None = None) -> datetime:
    """The entry's newest change: the event's own, or `changed_at` (the person's registration) if later."""
    newest = event.updated_at or timezone.now()
    return max(newest, changed_at) if changed_at is not None else newest


def sequence(event: Event, changed_at: datetime | None = None) -> int:
    """The entry's SEQUENCE: whole seconds from the event's creation to its newest change. It only
    grows (every change of the event or of the person's registration is saved with a later time), and
    fits a 32-bit integer for 68 years."""
    created = event.created_at or last_modified(event, changed_at)
    return max(0, int((last_modified(event, changed_at) - created).total_seconds()))


@dataclass(frozen=True)
class FeedEntry:
    """One event as a feed shows it. `cancelled`: the person's registration ended (an event cancelled
    by its organisers is cancelled anyway); `tentative`: saved, not registered (STATUS:TENTATIVE,
    shown free in free/busy); `changed_at`: the registration's last change, besides the event's."""

    event: Event
    url: str
    cancelled: bool = False
    tentative: bool = False
    changed_at: datetime | None = None

    @property
    def status(self) -> str:
        if self.cancelled or self.event.is_cancelled:
            return "CANCELLED"
        return "TENTATIVE" if self.tentative else "CONFIRMED"


def _entry(event: Event, *, url: str, status: str, zone: tzinfo, changed_at: datetime | None = None):
    changed = last_modified(event, changed_at).astimezone(UTC)
    entry = CalendarEvent()
    entry.add("uid", uid(event))
    entry.add("dtstamp", changed)
    entry.add("dtstart", event.starts_at.astimezone(zone))
    entry.add("dtend", event.ends_at.astimezone(zone))
    entry.add("summary", event.title)
    entry.add("location", location_text(event))
    entry.add("description", "\n\n".join(part for part in (event.summary, event.description) if part))
    entry.add("status", status)
    entry.add("sequence", sequence(event, changed_at))
    entry.add("last-modified", changed)
    if status == "TENTATIVE":  # saved, not registered: the person is not busy then
        entry.add("transp", "TRANSPARENT")
    if url:
        entry.add("url", url)
    return entry


def _calendar() -> Calendar:
    calendar = Calendar()
    calendar.add("prodid", prodid())
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    return calendar


def event_calendar(event: Event, *, url: str = "") -> bytes:
    """The event as a one-entry calendar. `url` should be absolute (the event page)."""
    status = "CANCELLED" if event.is_cancelled else "CONFIRMED"
    calendar = _calendar()
    calendar.add_component(_entry(event, url=url, status=status, zone=ZoneInfo(settings.TIME_ZONE)))
    for tzid in sorted(calendar.get_missing_tzids()):  # what `add_missing_timezones` adds, kept
        if (zone := _timezone(tzid)) is not None:
            calendar.subcomponents.insert(len(calendar.timezones), zone)
    return calendar.to_ical()


@functools.cache
def _timezone(tzid: str) -> Timezone | None:
    """The VTIMEZONE of `tzid` (None for a zone icalendar does not know), made once per process:
    icalendar derives it from the zone's transitions, about 80 ms, the same for every e-mail."""
    try:
        return Timezone.from_tzid(tzid)
    except ValueError:
        return None


def feed_calendar(entries: Iterable[FeedEntry], *, name: str, refresh: timedelta) -> bytes:
    """A subscribed calendar: `name` is what calendar programs call it, `refresh` how often they should
    fetch it again (REFRESH-INTERVAL of RFC 7986, and Outlook's X-PUBLISHED-TTL)."""
    calendar = _calendar()
    calendar.add("x-wr-calname", vText(name))
    calendar.add("name", vText(name))
    calendar.add("refresh-interval", vDuration(refresh), parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", vDuration(refresh))
    for item in entries:
        calendar.add_component(
            _entry(item.event, url=item.url, status=item.status, zone=UTC, changed_at=item.changed_at)
        )
    return calendar.to_ical()
