"""Conditional GETs and who may keep an answer (core/conditional.py), over HTTP through the whole
middleware stack (Django's test client): the list and event pages and the API's reads answer 304 to
their own ETag while nothing they show has changed, and 200 with a new ETag after an event is edited,
seats are taken or freed, an event is cancelled or starts, or the visitor saves; the API's anonymous
reads are public for PUBLIC_MAX_AGE, pages and every answer with a person's state private; a tool call
on a page's route is never a cached page."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from events.models import Activity
from tests.factories import EventFactory, RegistrationFactory, UserFactory

from .conftest import EN, HTMX

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LIST = "/events/?location=taipei"
API_SEARCH = "/api/events?location=taipei"
TOOL = {"X-WebMCP-Tool": "search_events", "X-Client-Mode": "agent"}


@pytest.fixture
def events(db):
    return [
        EventFactory(public_id="evt-etag-one", title="One", capacity=5),
        EventFactory(public_id="evt-etag-two", title="Two"),
    ]


def detail(event) -> str:
    return f"/events/{event.public_id}/"


def api_detail(event) -> str:
    return f"/api/events/{event.public_id}"


ROUTES = [
    pytest.param(lambda events: LIST, id="list page"),
    pytest.param(lambda events: detail(events[0]), id="event page"),
    pytest.param(lambda events: API_SEARCH, id="API search"),
    pytest.param(lambda events: api_detail(events[0]), id="API event"),
]


def first_and_again(client: Client, path: str, **headers: str):
    first = client.get(path, headers=headers)
    assert first.status_code == 200 and first["ETag"]
    again = client.get(path, headers={**headers, "If-None-Match": first["ETag"]})
    return first, again


def controls(response) -> set[str]:
    return {part.strip() for part in response["Cache-Control"].split(",")}


def varies(response) -> set[str]:
    return {part.strip().lower() for part in response["Vary"].split(",")}


@pytest.mark.parametrize("route", ROUTES)
def test_an_unchanged_answer_is_a_304_with_the_same_validators(route, events, en_client):
    path = route(events)
    first, again = first_and_again(en_client, path)
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == first["ETag"]
    assert again["Cache-Control"] == first["Cache-Control"]
    assert {"cookie", "accept-language"} <= varies(again) == varies(first)


@pytest.mark.parametrize("route", ROUTES)
def test_an_edit_seats_taken_and_a_cancellation_each_give_a_new_etag(route, events, en_client):
    path = route(events)
    one = events[0]
    seen = {en_client.get(path)["ETag"]}

    def changed() -> None:
        response = en_client.get(path, headers={"If-None-Match": ", ".join(seen)})
        assert response.status_code == 200
        assert response["ETag"] not in seen
        seen.add(response["ETag"])

    one.title = "One, renamed"
    one.save()
    changed()
    before = en_client.get(path).content
    RegistrationFactory(event=one, user=UserFactory())
    if path == API_SEARCH:  # its summaries carry no seats: the same answer, still 304
        assert en_client.get(path).content == before
        assert en_client.get(path, headers={"If-None-Match": ", ".join(seen)}).status_code == 304
    else:
        changed()
    one.status = "cancelled"
    one.save()
    changed()


@pytest.mark.parametrize("route", [ROUTES[0], ROUTES[2]], ids=["list page", "API search"])
def test_a_deleted_event_gives_the_search_a_new_etag(route, events, en_client):
    path = route(events)
    """Not the newest change: the other event was saved after it, so only its retired id tells."""
    events[1].save()
    first = en_client.get(path)
    events[0].delete()
    later = en_client.get(path, headers={"If-None-Match": first["ETag"]})
    assert later.status_code == 200 and later["ETag"] != first["ETag"]
    assert b"evt-etag-one" in first.content and b"evt-etag-one" not in later.content


def test_an_event_that_starts_leaves_the_list_with_a_new_etag(events, en_client):
    first = en_client.get(LIST)
    with time_machine.travel(events[0].starts_at + timedelta(minutes=1)):
        later = en_client.get(LIST, headers={"If-None-Match": first["ETag"]})
    assert later.status_code == 200 and b"evt-etag-one" not in later.content


def test_the_waiting_list_closing_gives_the_event_page_a_new_etag(events, en_client, settings):
    settings.WAITLIST_OFFERS_STOP_HOURS = 2
    page = detail(events[0])
    first = en_client.get(page)
    closing = events[0].starts_at - timedelta(hours=1)
    with time_machine.travel(closing):
        assert en_client.get(page, headers={"If-None-Match": first["ETag"]}).status_code == 200


def test_the_visitors_own_save_gives_their_pages_a_new_etag(events, signed_in_en_client):
    client = signed_in_en_client
    first = client.get(LIST)
    assert client.post(f"/events/{events[1].public_id}/save/").status_code == 302
    shown = client.get(LIST, headers={"If-None-Match": first["ETag"]})  # the message: drawn
    assert shown.status_code == 200 and b"Saved. You can find it" in shown.content
    again = client.get(LIST, headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 200 and again["ETag"] != first["ETag"]
    assert b"badge-saved" in again.content


def test_a_page_with_a_message_waiting_is_drawn(events, signed_in_en_client):
    client = signed_in_en_client
    first = client.get(detail(events[1]))
    client.post(f"/events/{events[1].public_id}/save/")
    client.post(f"/events/{events[1].public_id}/unsave/")  # back as it was, with a message waiting
    response = client.get(detail(events[1]), headers={"If-None-Match": first["ETag"]})
    assert response.status_code == 200 and b'class="messages"' in response.content


@pytest.mark.parametrize("path", [LIST, "/events/evt-etag-one/"])
def test_pages_are_never_for_a_shared_cache(path, events, en_client, signed_in_en_client):
    """Every page carries the session's CSRF token: anonymous or signed in, only the visitor's own
    browser keeps it, and asks again each time."""
    for client in (en_client, signed_in_en_client):
        response = client.get(path)
        assert {"private", "no-cache"} <= controls(response)
        assert "public" not in controls(response)
        assert {"cookie", "accept-language", "hx-request", "x-webmcp-tool"} <= varies(response)


@pytest.mark.parametrize("route", ROUTES)
def test_a_signed_in_visitor_never_gets_a_304_for_an_anonymous_etag(route, events, en_client, user):
    path = route(events)
    anonymous = en_client.get(path)
    client = Client(headers=EN)
    client.force_login(user)
    response = client.get(path, headers={"If-None-Match": anonymous["ETag"]})
    assert response.status_code == 200 and response["ETag"] != anonymous["ETag"]
    assert "private" in controls(response) and "public" not in controls(response)


def test_a_new_session_never_gets_a_304_for_another_sessions_page(events, en_client):
    """The page holds the session's CSRF token: another visitor's copy would carry a token that is not
    theirs."""
    first = en_client.get(LIST)
    stranger = Client(headers=EN)
    assert stranger.get(LIST, headers={"If-None-Match": first["ETag"]}).status_code == 200


def test_the_apis_anonymous_reads_are_public_for_the_max_age(events, settings):
    settings.PUBLIC_MAX_AGE = 30
    client = Client(headers=EN)
    for path in (API_SEARCH, api_detail(events[0])):
        response = client.get(path)
        assert {"public", "max-age=30"} <= controls(response)
        assert {"cookie", "accept-language", "authorization"} <= varies(response)
    settings.PUBLIC_MAX_AGE = 0
    assert "private" in controls(client.get(API_SEARCH))


def test_the_apis_answers_with_a_persons_state_are_private(events, user):
    signed_in = Client(headers=EN)
    signed_in.force_login(user)
    saver = Client(headers=EN)
    assert saver.post(f"/events/{events[1].public_id}/save/").status_code == 302  # an anonymous save
    for client in (signed_in, saver):
        for path in (API_SEARCH, api_detail(events[1])):
            response = client.get(path)
            assert {"private", "no-cache"} <= controls(response) and "public" not in controls(response)
    assert b'"saved":true' in saver.get(api_detail(events[1])).content


def test_a_304_performs_no_action(events, en_client):
    """The visitor already holds the answer: no use case runs, no Activity row is written."""
    first = en_client.get(API_SEARCH)
    before = Activity.objects.count()
    assert en_client.get(API_SEARCH, headers={"If-None-Match": first["ETag"]}).status_code == 304
    assert Activity.objects.count() == before
    assert en_client.get(API_SEARCH).status_code == 200
    assert Activity.objects.count() == before + 1


def test_a_fragment_and_the_page_have_different_etags(events, en_client):
    page = en_client.get(LIST)
    fragment = en_client.get(LIST, headers={**HTMX, "HX-Target": "results", "If-None-Match": page["ETag"]})
    assert fragment.status_code == 200 and fragment["ETag"] != page["ETag"]
    assert b"<html" not in fragment.content


def test_a_tool_call_on_a_page_route_is_never_a_cached_page(events, en_client):
    """The runtime's search_events call is a GET of the list's own URL: it is answered by the tool
    call's view (the result island), even with the page's ETag, and marked for nobody to keep."""
    page = en_client.get(LIST)
    call = en_client.get(LIST, headers={**TOOL, "If-None-Match": page["ETag"]})
    assert call.status_code == 200
    assert b'id="webmcp-result"' in call.content
    assert {"no-store", "private"} <= controls(call) and "public" not in controls(call)
    assert "x-webmcp-tool" in varies(call)


def test_an_unknown_event_is_a_404_without_validators(en_client, db):
    for path in ("/events/evt-nothing-here/", "/api/events/evt-nothing-here"):
        response = en_client.get(path, headers={"If-None-Match": "*"})
        assert response.status_code == 404
        assert not response.has_header("ETag")


def test_if_modified_since_alone_is_not_answered_304(events, en_client):
    """The pages and the API give an ETag only (a removed save leaves no time behind)."""
    first = en_client.get(API_SEARCH)
    assert not first.has_header("Last-Modified")
    later = timezone.now() + timedelta(days=1)
    since = later.strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert en_client.get(API_SEARCH, headers={"If-Modified-Since": since}).status_code == 200


def test_a_get_event_details_tool_call_on_the_api_is_always_performed(events, en_client):
    """The runtime's `get_event_details` reads `GET /api/events/<id>`: each call is its own request
    and Activity row, never a 304, and kept by no cache."""
    path = api_detail(events[0])
    first = en_client.get(path)
    before = Activity.objects.count()
    call = en_client.get(
        path, headers={**TOOL, "X-WebMCP-Tool": "get_event_details", "If-None-Match": first["ETag"]}
    )
    assert call.status_code == 200 and b'"ok":true' in call.content
    assert Activity.objects.count() == before + 1
    assert {"no-store", "private"} <= controls(call) and "public" not in controls(call)
    assert "x-webmcp-tool" in varies(first) and "x-webmcp-tool" in varies(call)
