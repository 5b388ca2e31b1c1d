"""Calendar feeds: a person's secret feed of their registrations, the public search feed (RFC 5545).

Both are read back with icalendar, as a calendar program would. The secret address never reaches an
Activity row or a log line."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
import time_machine
from django.core.servers.basehttp import WSGIRequestHandler
from django.test import Client
from django.utils import timezone
from icalendar import Calendar

from config.settings import MaskSecretPaths
from core.visitors import Visitor
from events import actions
from events.choices import Level, Location, RegistrationStatus
from events.models import Activity, CalendarFeed
from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory, UserFactory
from tests.pages.conftest import EN

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

CALENDAR_PROPERTIES = ("PRODID", "VERSION", "CALSCALE", "METHOD", "X-WR-CALNAME", "REFRESH-INTERVAL")
ENTRY_PROPERTIES = (
    *("UID", "DTSTAMP", "DTSTART", "DTEND", "SUMMARY", "LOCATION", "URL", "DESCRIPTION"),
    *("SEQUENCE", "LAST-MODIFIED", "STATUS"),
)


def later(minutes: int = 5):
    """A clock some minutes ahead (SEQUENCE counts whole seconds)."""
    return time_machine.travel(timezone.now() + timedelta(minutes=minutes))


def subscribe(client: Client) -> str:
    """The person gets their address on My events; returns its path."""
    response = client.post("/me/calendar/")
    assert response.status_code == 302
    page = client.get("/me/").content.decode()
    [path] = set(re.findall(r'value="http://testserver(/calendar/[^"?]+\.ics)"', page))
    return path


def parsed(response) -> Calendar:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "text/calendar; charset=utf-8"
    body = response.content
    lines = body.split(b"\r\n")
    assert lines[-1] == b"" and b"\n" not in body.replace(b"\r\n", b"")  # CRLF only
    assert all(len(line) <= 75 for line in lines)  # folded at 75 octets
    calendar = Calendar.from_ical(body)
    for name in CALENDAR_PROPERTIES:
        assert name in calendar, name
    assert str(calendar["VERSION"]) == "2.0"
    assert str(calendar["METHOD"]) == "PUBLISH"
    assert calendar["REFRESH-INTERVAL"].params["VALUE"] == "DURATION"
    assert calendar.decoded("REFRESH-INTERVAL") == timedelta(hours=1)
    assert str(calendar["X-PUBLISHED-TTL"]) == "PT1H"
    for entry in calendar.walk("VEVENT"):
        for name in ENTRY_PROPERTIES:
            assert name in entry, name
        for name in ("DTSTART", "DTEND"):
            assert entry.decoded(name).utcoffset() == timedelta(0) and "TZID" not in entry[name].params
        assert entry.to_ical().count(b"Z\r\n") >= 4  # DTSTAMP, DTSTART, DTEND, LAST-MODIFIED in UTC
    return calendar


def entries(calendar: Calendar) -> dict[str, dict]:
    """The feed's entries by event id: status, sequence, last change, summary, start."""
    return {
        str(entry["UID"]).split("@")[0]: {
            "status": str(entry["STATUS"]),
            "sequence": int(entry["SEQUENCE"]),
            "modified": entry.decoded("LAST-MODIFIED"),
            "summary": str(entry["SUMMARY"]),
            "start": entry.decoded("DTSTART"),
        }
        for entry in calendar.walk("VEVENT")
    }


@pytest.fixture
def person(signed_in_en_client):
    return signed_in_en_client


@pytest.fixture
def organiser(db):
    return UserFactory(username="organiser", is_staff=True, is_superuser=True)


# ── the personal feed ────────────────────────────────────────────────────────────────────────


def test_the_personal_feed_lists_the_persons_registrations_only(person, user, other_user):
    mine = EventFactory(public_id="evt-mine", title="Mine", venue="Hall A")
    cancelled = EventFactory(public_id="evt-cancelled-mine")
    theirs = EventFactory(public_id="evt-theirs")
    unregistered = EventFactory(public_id="evt-nobody")
    RegistrationFactory(user=user, event=mine)
    RegistrationFactory(user=user, event=cancelled, status=RegistrationStatus.CANCELLED)
    RegistrationFactory(user=other_user, event=theirs)
    SavedEventFactory(user=user, event=unregistered)

    response = Client(headers=EN).get(subscribe(person))  # a calendar program: no session
    calendar = parsed(response)
    listed = entries(calendar)
    assert set(listed) == {"evt-mine", "evt-cancelled-mine"}
    assert listed["evt-mine"]["status"] == "CONFIRMED"
    assert listed["evt-cancelled-mine"]["status"] == "CANCELLED"
    assert listed["evt-mine"]["start"] == mine.starts_at.replace(microsecond=0)  # whole seconds
    assert str(calendar["X-WR-CALNAME"]) == "AgentReady Events: my events"
    (entry,) = [e for e in calendar.walk("VEVENT") if str(e["UID"]).startswith("evt-mine@")]
    assert str(entry["URL"]) == "http://testserver/events/evt-mine/"
    assert str(entry["LOCATION"]) == "Hall A, Taipei"
    assert "private" in response["Cache-Control"] and "public" not in response["Cache-Control"]
    assert response["ETag"] and response["Last-Modified"]


def test_the_uid_is_the_single_event_files(person, user, en_client):
    event = EventFactory(public_id="evt-same-uid")
    RegistrationFactory(user=user, event=event)
    feed = entries(parsed(en_client.get(subscribe(person))))
    (single,) = Calendar.from_ical(en_client.get("/events/evt-same-uid/calendar.ics").content).walk("VEVENT")
    assert str(single["UID"]) == "evt-same-uid@agentready-events"
    assert "evt-same-uid" in feed


def test_saved_events_are_added_on_request_as_tentative(person, user, en_client):
    registered = EventFactory(public_id="evt-registered")
    saved = EventFactory(public_id="evt-saved")
    RegistrationFactory(user=user, event=registered)
    SavedEventFactory(user=user, event=registered)  # registered and saved: listed once, as registered
    SavedEventFactory(user=user, event=saved)
    path = subscribe(person)
    calendar = parsed(en_client.get(f"{path}?saved=1"))
    listed = entries(calendar)
    assert set(listed) == {"evt-registered", "evt-saved"}
    assert listed["evt-registered"]["status"] == "CONFIRMED"
    assert listed["evt-saved"]["status"] == "TENTATIVE"
    (entry,) = [e for e in calendar.walk("VEVENT") if str(e["UID"]).startswith("evt-saved@")]
    assert str(entry["TRANSP"]) == "TRANSPARENT"
    assert str(calendar["X-WR-CALNAME"]) == "AgentReady Events: my events and saved events"
    assert en_client.get(f"{path}?saved=maybe").status_code == 400
    assert en_client.get(f"{path}?other=1").status_code == 400


def test_an_edited_event_has_a_higher_sequence_and_a_later_last_modified(person, user, en_client):
    event = EventFactory(public_id="evt-edited", title="Before")
    RegistrationFactory(user=user, event=event)
    path = subscribe(person)
    before = entries(parsed(en_client.get(path)))["evt-edited"]
    with later():
        event.title = "After"
        event.starts_at += timedelta(hours=1)
        event.ends_at += timedelta(hours=1)
        event.save()
        after = entries(parsed(en_client.get(path)))["evt-edited"]
    assert after["summary"] == "After" and after["start"] == before["start"] + timedelta(hours=1)
    assert after["sequence"] > before["sequence"]
    assert after["modified"] > before["modified"]


def test_a_cancelled_registration_is_cancelled_with_a_higher_sequence(person, user, en_client):
    event = EventFactory(public_id="evt-person-cancels")
    actions.call("register_event", visitor=Visitor(user=user), channel="ui", event_id=event.public_id)
    path = subscribe(person)
    before = entries(parsed(en_client.get(path)))["evt-person-cancels"]
    with later():
        actions.call(
            "cancel_registration", visitor=Visitor(user=user), channel="ui", event_id=event.public_id
        )
        after = entries(parsed(en_client.get(path)))["evt-person-cancels"]
    assert (before["status"], after["status"]) == ("CONFIRMED", "CANCELLED")
    assert after["sequence"] > before["sequence"]
    assert after["modified"] > before["modified"]
    with later(10):  # registering again confirms it, and the sequence still only grows
        actions.call("register_event", visitor=Visitor(user=user), channel="ui", event_id=event.public_id)
        again = entries(parsed(en_client.get(path)))["evt-person-cancels"]
    assert again["status"] == "CONFIRMED" and again["sequence"] > after["sequence"]


def test_an_event_cancelled_by_its_organisers_is_cancelled(person, user, organiser, en_client):
    event = EventFactory(public_id="evt-organisers-cancel")
    RegistrationFactory(user=user, event=event)
    path = subscribe(person)
    before = entries(parsed(en_client.get(path)))["evt-organisers-cancel"]
    with later():
        actions.call(
            "cancel_event", visitor=Visitor(user=organiser), channel="admin", event_id=event.public_id
        )
        after = entries(parsed(en_client.get(path)))["evt-organisers-cancel"]
    assert after["status"] == "CANCELLED"
    assert after["sequence"] > before["sequence"]


def test_resetting_gives_a_new_address_and_the_old_one_answers_404(person, user, en_client):
    RegistrationFactory(user=user, event=EventFactory())
    old = subscribe(person)
    assert en_client.get(old).status_code == 200
    new = subscribe(person)  # the button now resets
    assert new != old
    assert en_client.get(old).status_code == 404
    assert en_client.get(new).status_code == 200
    token = new.removeprefix("/calendar/").removesuffix(".ics")
    assert len(token) >= 22  # at least 128 random bits in base64url
    assert CalendarFeed.objects.get(user=user).token == token


def test_my_events_offers_webcal_and_https_links_and_the_reset(person):
    page = person.get("/me/").content.decode()
    assert "Get my calendar address" in page and "webcal://" not in page
    path = subscribe(person)
    page = person.get("/me/").content.decode()
    assert f'href="webcal://testserver{path}"' in page
    assert f'href="webcal://testserver{path}?saved=1"' in page
    assert f'value="http://testserver{path}"' in page
    assert "Or copy this address into your calendar program:" in page
    assert 'action="/me/calendar/"' in page and "Reset the address" in page


def test_resetting_needs_a_signed_in_person(en_client):
    response = en_client.post("/me/calendar/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not CalendarFeed.objects.exists()
    assert en_client.get("/me/calendar/").status_code == 405


def test_a_repeated_request_with_the_etag_is_a_304(person, user, en_client):
    event = EventFactory(public_id="evt-conditional")
    RegistrationFactory(user=user, event=event)
    path = subscribe(person)
    first = en_client.get(path)
    etag, modified = first["ETag"], first["Last-Modified"]
    unchanged = en_client.get(path, headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged["ETag"] == etag and "private" in unchanged["Cache-Control"]
    assert en_client.get(path, headers={"If-Modified-Since": modified}).status_code == 304
    with later():
        event.title = "Changed"
        event.save()
        changed = en_client.get(path, headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed["ETag"] != etag
        assert en_client.get(path, headers={"If-Modified-Since": modified}).status_code == 200


def test_a_removed_save_changes_the_saved_feeds_etag(person, user, en_client):
    saved = SavedEventFactory(user=user, event=EventFactory(public_id="evt-unsaved"))
    path = f"{subscribe(person)}?saved=1"
    first = en_client.get(path)
    assert "Last-Modified" not in first  # a removed save leaves no time behind: the ETag alone
    actions.call("unsave_event", visitor=Visitor(user=user), channel="ui", event_id=saved.event.public_id)
    second = en_client.get(path, headers={"If-None-Match": first["ETag"]})
    assert second.status_code == 200 and "evt-unsaved" not in entries(parsed(second))


def test_an_unknown_address_or_an_inactive_person_is_404(person, user, en_client):
    path = subscribe(person)
    assert en_client.get("/calendar/not-a-token.ics").status_code == 404
    user.is_active = False
    user.save()
    assert en_client.get(path).status_code == 404


# ── the token stays out of the records ───────────────────────────────────────────────────────


def test_the_token_is_in_no_activity_row_and_no_log_line(person, user, en_client, caplog):
    event = EventFactory(public_id="evt-private")
    actions.call("register_event", visitor=Visitor(user=user), channel="ui", event_id=event.public_id)
    old = subscribe(person)
    new = subscribe(person)
    server = logging.getLogger("django.server")  # it does not propagate: listen to it directly
    server.addHandler(caplog.handler)
    try:
        with (
            caplog.at_level(logging.INFO, logger="django.request"),
            caplog.at_level(logging.INFO, "django.server"),
        ):
            assert en_client.get(new).status_code == 200
            assert en_client.get(old).status_code == 404  # "Not Found: <path>"
            assert en_client.get(f"{new}?saved=maybe").status_code == 400  # "Bad Request: <path>"
            for path, status in ((new, "200"), (old, "404")):  # the development server's request lines
                handler = SimpleNamespace(request=None, log_date_time_string=lambda: "04/Dec/2026 10:00:00")
                WSGIRequestHandler.log_message(handler, '"%s" %s %s', f"GET {path} HTTP/1.1", status, "1234")
    finally:
        server.removeHandler(caplog.handler)
    lines = [record.getMessage() for record in caplog.records]
    assert "Not Found: /calendar/***.ics" in lines
    assert "Bad Request: /calendar/***.ics" in lines
    assert '"GET /calendar/***.ics HTTP/1.1" 200 1234' in lines
    for path in (old, new):
        token = path.removeprefix("/calendar/").removesuffix(".ics")
        assert token not in caplog.text
        assert all(token not in line for line in lines)
        for row in Activity.objects.values_list():
            assert all(token not in str(value) for value in row)
    assert Activity.objects.filter(action="register_event").count() == 1  # the feeds perform no action


def test_the_mask_leaves_other_paths_alone():
    mask = MaskSecretPaths()
    record = logging.LogRecord(
        "any", logging.ERROR, __file__, 1, "serving %s", ("/calendar/abc-DEF_1.ics",), None
    )
    assert mask.filter(record) and record.getMessage() == "serving /calendar/***.ics"
    other = logging.LogRecord(
        "any", logging.ERROR, __file__, 1, "serving %s", ("/events/evt-a/calendar.ics",), None
    )
    assert mask.filter(other) and other.getMessage() == "serving /events/evt-a/calendar.ics"


# ── the public feed ──────────────────────────────────────────────────────────────────────────


def test_the_public_feed_lists_exactly_the_matching_published_upcoming_events(en_client):
    match = EventFactory(public_id="evt-taipei-free-1", location=Location.TAIPEI)
    match_too = EventFactory(
        public_id="evt-taipei-free-2",
        title="WebMCP evening",
        location=Location.TAIPEI,
        starts_at=timezone.now() + timedelta(days=2),
    )
    EventFactory(public_id="evt-taipei-paid", location=Location.TAIPEI, paid=True)
    EventFactory(public_id="evt-online-free", location=Location.ONLINE)
    EventFactory(public_id="evt-taipei-past", location=Location.TAIPEI, past=True)
    EventFactory(public_id="evt-taipei-draft", location=Location.TAIPEI, draft=True)
    EventFactory(public_id="evt-taipei-cancelled", location=Location.TAIPEI, cancelled=True)

    response = en_client.get("/events/feed.ics?location=taipei&price=free")
    calendar = parsed(response)
    assert list(entries(calendar)) == [match_too.public_id, match.public_id]  # soonest first
    assert all(status == "CONFIRMED" for status in (e["status"] for e in entries(calendar).values()))
    assert str(calendar["X-WR-CALNAME"]) == "AgentReady Events: Taipei · Free"
    assert "public" in response["Cache-Control"] and "max-age=3600" in response["Cache-Control"]
    assert response["ETag"] and response["Last-Modified"]
    everything = entries(parsed(en_client.get("/events/feed.ics")))
    assert set(everything) == {match.public_id, match_too.public_id, "evt-taipei-paid", "evt-online-free"}
    # The API's conditions exactly: a keyword in titles and summaries; an empty value means any.
    by_query = parsed(en_client.get(f"/events/feed.ics?query=webmcp&level={Level.BEGINNER}&price="))
    assert list(entries(by_query)) == [match_too.public_id]
    assert str(by_query["X-WR-CALNAME"]) == "AgentReady Events: Beginner · “webmcp”"


@pytest.mark.parametrize(
    "query", ["level=expert", "location=mars", "price=cheap", "q=webmcp", "level=beginner&level=advanced"]
)
def test_an_invalid_search_condition_is_400(en_client, query):
    response = en_client.get(f"/events/feed.ics?{query}")
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_INPUT"


def test_the_public_feed_answers_304_until_the_catalogue_changes(en_client):
    event = EventFactory(public_id="evt-public-conditional")
    first = en_client.get("/events/feed.ics?location=taipei")
    etag, modified = first["ETag"], first["Last-Modified"]
    assert (
        en_client.get("/events/feed.ics?location=taipei", headers={"If-None-Match": etag}).status_code == 304
    )
    assert (
        en_client.get("/events/feed.ics?location=online", headers={"If-None-Match": etag}).status_code == 200
    )
    not_modified = en_client.get("/events/feed.ics?location=taipei", headers={"If-Modified-Since": modified})
    assert not_modified.status_code == 304
    with later():
        event.status = "cancelled"  # it leaves the feed: the catalogue's newest change says so
        event.save()
        gone = en_client.get("/events/feed.ics?location=taipei", headers={"If-Modified-Since": modified})
        assert gone.status_code == 200 and entries(parsed(gone)) == {}


def test_the_public_feed_follows_the_language(client):
    EventFactory(public_id="evt-in-chinese", location=Location.TAIPEI)
    english = client.get("/events/feed.ics?location=taipei", headers=EN)
    chinese = client.get("/events/feed.ics?location=taipei", headers={"Accept-Language": "zh-hant"})
    assert english["ETag"] != chinese["ETag"]
    assert "Accept-Language" in chinese["Vary"]
    assert str(Calendar.from_ical(chinese.content)["X-WR-CALNAME"]) != str(
        Calendar.from_ical(english.content)["X-WR-CALNAME"]
    )


def test_a_sequence_fits_and_only_grows_with_time():
    from events.mail import ics

    created = datetime(2026, 1, 1, tzinfo=UTC)
    event = SimpleNamespace(created_at=created, updated_at=created + timedelta(seconds=90))
    assert ics.sequence(event) == 90
    assert ics.sequence(event, created + timedelta(seconds=120)) == 120
    assert ics.sequence(event, created + timedelta(seconds=30)) == 90  # an older registration: the event's
