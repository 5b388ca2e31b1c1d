"""schema.org `Event` JSON-LD for the detail page (what search engines and agents read from the page).

Event text is written by people, so the JSON is escaped the way Django's `json_script` escapes it
(`<`, `>` and `&` as \\u003C …): no title can close the `<script>` element it lives in.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import localtime

from .choices import Location
from .models import Event

SCHEMA = "https://schema.org/"

_JSON_SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


def event_data(event: Event, *, url: str) -> dict[str, Any]:
    """The schema.org Event for one event; `url` is the page's absolute URL."""
    online = event.location == Location.ONLINE
    if online:
        place: dict[str, Any] = {"@type": "VirtualLocation", "url": url}
        if event.venue:
            place["name"] = event.venue
    else:
        place = {
            "@type": "Place",
            "name": event.venue or str(event.get_location_display()),
            "address": {
                "@type": "PostalAddress",
                "addressLocality": str(event.get_location_display()),
                "addressCountry": "TW",
            },
        }
    offer: dict[str, Any] = {
        "@type": "Offer",
        "url": url,
        "price": str(event.price_amount) if event.price_amount is not None else "0",
        "priceCurrency": event.currency or "TWD",
        "availability": SCHEMA + ("SoldOut" if event.is_full else "InStock"),
    }
    data: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "Event",
        "@id": url,
        "url": url,
        "identifier": event.public_id,
        "name": event.title,
        "description": event.summary,
        "startDate": localtime(event.starts_at).isoformat(),
        "endDate": localtime(event.ends_at).isoformat(),
        "eventStatus": SCHEMA + ("EventCancelled" if event.is_cancelled else "EventScheduled"),
        "eventAttendanceMode": SCHEMA
        + ("OnlineEventAttendanceMode" if online else "OfflineEventAttendanceMode"),
        "location": place,
        "offers": offer,
        "organizer": {"@type": "Organization", "name": settings.SITE_NAME},
    }
    if event.capacity is not None:
        data["maximumAttendeeCapacity"] = event.capacity
        seats_left = getattr(event, "seats_left", None)
        if seats_left is not None:
            data["remainingAttendeeCapacity"] = max(seats_left, 0)
    return data


def event_script(event: Event, *, url: str) -> SafeString:
    """`<script type="application/ld+json">` holding `event_data`, safe to put in any HTML page."""
    text = json.dumps(event_data(event, url=url), ensure_ascii=False, sort_keys=False)
    return format_html(
        '<script type="application/ld+json">{}</script>', mark_safe(text.translate(_JSON_SCRIPT_ESCAPES))
    )
