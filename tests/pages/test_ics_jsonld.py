"""The .ics download and the schema.org JSON-LD are machine-readable and cannot be broken by event text."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from icalendar import Calendar

from events.choices import Location
from tests.factories import EventFactory, RegistrationFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
TAIPEI = ZoneInfo("Asia/Taipei")


def json_ld(html: str) -> dict:
    scripts = re.findall(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)
    assert len(scripts) == 1
    return json.loads(scripts[0])


def test_ics_holds_start_end_and_taipei_time_zone(en_client):
    starts = datetime(2031, 5, 2, 2, 0, tzinfo=UTC)  # 10:00 in Taipei
    event = EventFactory(
        public_id="evt-ics-check",
        title="Calendar test",
        venue="Hall A",
        starts_at=starts,
        ends_at=starts + timedelta(hours=3),
    )
    response = en_client.get(f"/events/{event.public_id}/calendar.ics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/calendar")
    assert 'filename="evt-ics-check.ics"' in response["Content-Disposition"]
    calendar = Calendar.from_ical(response.content)
    (entry,) = calendar.walk("VEVENT")
    assert str(entry["UID"]).startswith("evt-ics-check")
    assert str(entry["SUMMARY"]) == "Calendar test"
    assert "Hall A" in str(entry["LOCATION"])
    assert str(entry["URL"]) == "http://testserver/events/evt-ics-check/"
    start, end = entry.decoded("DTSTART"), entry.decoded("DTEND")
    assert start == starts and end == starts + timedelta(hours=3)
    assert start.replace(tzinfo=None) == datetime(2031, 5, 2, 10, 0)
    assert str(start.tzinfo) == "Asia/Taipei"
    assert entry["DTSTART"].params["TZID"] == "Asia/Taipei"
    assert [str(tz["TZID"]) for tz in calendar.walk("VTIMEZONE")] == ["Asia/Taipei"]


def test_ics_of_an_unknown_event_is_404(en_client):
    assert en_client.get("/events/evt-missing/calendar.ics").status_code == 404


def test_json_ld_describes_the_event(en_client):
    event = EventFactory(title="Schema test", venue="Hall B", paid=True, capacity=10)
    data = json_ld(en_client.get(f"/events/{event.public_id}/").content.decode())
    assert data["@type"] == "Event"
    assert data["name"] == "Schema test"
    assert data["startDate"] == event.starts_at.astimezone(TAIPEI).isoformat()
    assert data["endDate"] == event.ends_at.astimezone(TAIPEI).isoformat()
    assert data["location"]["@type"] == "Place"
    assert data["location"]["name"] == "Hall B"
    assert data["offers"]["price"] == "500"
    assert data["offers"]["priceCurrency"] == "TWD"
    assert data["offers"]["availability"] == "https://schema.org/InStock"
    assert data["eventStatus"] == "https://schema.org/EventScheduled"
    assert data["eventAttendanceMode"] == "https://schema.org/OfflineEventAttendanceMode"
    assert data["description"]


def test_json_ld_of_a_full_cancelled_online_event(en_client, other_user):
    event = EventFactory(location=Location.ONLINE, capacity=1)
    RegistrationFactory(user=other_user, event=event)
    event.status = "cancelled"
    event.save()
    data = json_ld(en_client.get(f"/events/{event.public_id}/").content.decode())
    assert data["location"]["@type"] == "VirtualLocation"
    assert data["offers"]["availability"] == "https://schema.org/SoldOut"
    assert data["eventStatus"] == "https://schema.org/EventCancelled"
    assert data["eventAttendanceMode"] == "https://schema.org/OnlineEventAttendanceMode"


def test_event_text_cannot_break_out_of_the_json_ld_script(en_client):
    title = "</script><script>alert(1)</script>"
    event = EventFactory(title=title, summary="a & b <i>")
    html = en_client.get(f"/events/{event.public_id}/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "\\u003C/script\\u003E\\u003Cscript\\u003Ealert(1)" in html
    data = json_ld(html)
    assert data["name"] == title
    assert data["description"] == "a & b <i>"
