"""WebMCP tool calls on page routes: one request per call, answered with the page's region and the result.

The browser runtime (webmcp.js) calls a tool's page route with `X-WebMCP-Tool` (the tool),
`X-Client-Mode: agent` and `X-WebMCP-Page` (the page the call came from). A success is the region of
that page plus the result island, whose body is the API's body for the same use case; a refusal is the
JSON envelope and nothing else. These tests pin that HTTP contract through Django's test client.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from events.choices import Level, Location, RegistrationStatus
from events.models import Activity, Notification, Registration, SavedEvent
from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory
from tests.tasks import run_tasks

from .conftest import EN, manifest_in, manifest_tools

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LIST = "/events/"
ORIGIN = "http://testserver"
ISLAND = re.compile(r'<script id="webmcp-result" type="application/json">(.*?)</script>', re.S)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Write throttle counts live in the cache; each test starts with none."""
    cache.clear()
    yield
    cache.clear()


def tool_headers(tool: str, page: str | None = None) -> dict[str, str]:
    """What the runtime sends with every call (webmcp.js buildRequest)."""
    headers = {"X-WebMCP-Tool": tool, "X-Client-Mode": "agent", "Accept": "text/html, application/json"}
    if page is not None:
        headers["X-WebMCP-Page"] = page
    return headers


def search_call(client: Client, query: str = "", *, page: str | None = None):
    return client.get(f"{LIST}?{query}" if query else LIST, headers=tool_headers("search_events", page))


def write_call(client: Client, tool: str, event_id: str, action: str, body: Any = None, *, page=None):
    """A write tool call: POST to the page route with a JSON body (empty when the tool takes `{}`)."""
    data = "" if body is None else body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(
        f"/events/{event_id}/{action}/",
        data=data,
        content_type="application/json",
        headers=tool_headers(tool, page),
    )


def island(response) -> dict[str, Any]:
    """The tool result carried by an HTML answer (exactly one island)."""
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"].startswith("text/html")
    [text] = ISLAND.findall(response.content.decode())
    return json.loads(text)


def region(response) -> str:
    """The live region of an HTML answer, without the island; asserts it is a region, not a page."""
    html = response.content.decode()
    assert html.lstrip().startswith('<main id="main" data-webmcp-region')
    assert "<html" not in html
    return ISLAND.sub("", html)


def search_answer(response) -> str:
    """A search call's answer: the parts of the list page it replaces, by id (the form, the results,
    the manifest), without the island, and nothing else of the page."""
    html = ISLAND.sub("", response.content.decode()).strip()
    assert "<html" not in html and "data-webmcp-region" not in html
    assert html.startswith('<form id="search-form"')
    ids = re.findall(r'^\s*<(?:form|section|script)\b[^>]*\bid="([^"]+)"', html, re.M)
    assert ids == ["search-form", "results", "webmcp-manifest"], ids
    return html


def refusal(response, status: int, code: str, reason: str) -> dict[str, Any]:
    """A refused call: the envelope alone, nothing of the page."""
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert (body["ok"], body["code"], body["reason"]) == (False, code, reason)
    assert body["message"] and body["nextAction"]
    assert body["uiUpdated"] is False
    assert type(body["stateVersion"]) is int
    assert b"<main" not in response.content and b"webmcp-result" not in response.content
    assert not response.has_header("HX-Push-Url")
    assert not response.has_header("Location")
    return body


def activity() -> list[tuple[str, str, str]]:
    return list(Activity.objects.order_by("id").values_list("action", "mode", "outcome"))


def assert_private(response) -> None:
    assert "no-store" in response["Cache-Control"]
    assert "X-WebMCP-Tool" in response["Vary"]


class SearchForm(HTMLParser):
    """What the search form shows: each text input's value and each select's selected option."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self._select: str | None = None
        self._in_form = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "form":
            self._in_form = attributes.get("id") == "search-form"
        if not self._in_form:
            return
        if tag == "input" and attributes.get("type") == "search":
            self.values[attributes["name"]] = attributes.get("value") or ""
        elif tag == "select":
            self._select = attributes["name"]
            self.values.setdefault(self._select, "")
        elif tag == "option" and self._select and "selected" in attributes:
            self.values[self._select] = attributes["value"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "form":
            self._in_form = False


def shown_conditions(html: str) -> dict[str, str]:
    values = SearchForm(html).values
    assert set(values) == {"query", "location", "price", "level"}, values
    return values


ANY = {"query": "", "location": "", "price": "", "level": ""}


@pytest.fixture
def events(event):
    """A small catalogue: two WebMCP events in two cities, others around them, and some never shown."""
    soon = timezone.now() + timedelta(days=3)
    made = {
        "intro": event,  # evt-webmcp-intro: "WebMCP 入門工作坊", Taipei, free, beginner
        "kaohsiung": EventFactory(
            public_id="evt-webmcp-kaohsiung",
            title="WebMCP meetup in Kaohsiung",
            location=Location.KAOHSIUNG,
            paid=True,
            level=Level.INTERMEDIATE,
            starts_at=soon,
        ),
        "django": EventFactory(
            title="Django night", location=Location.KAOHSIUNG, level=Level.ADVANCED, paid=True
        ),
        "online": EventFactory(
            title="Agent UX online", summary="About webmcp forms.", location=Location.ONLINE
        ),
    }
    for number in range(11):
        EventFactory(title=f"Taipei talk {number:02d}", starts_at=soon + timedelta(hours=number + 1))
    EventFactory(title="WebMCP retro", past=True)
    EventFactory(title="WebMCP draft", draft=True)
    EventFactory(title="WebMCP cancelled", cancelled=True)
    return made


# ── search_events: GET /events/?<conditions> ──────────────────────────────────────────────────


PARITY_QUERIES = [
    "",
    "query=WebMCP",
    "query=webmcp",  # case-insensitive
    "query=%E5%85%A5%E9%96%80",  # 入門
    "query=++WebMCP+",  # trimmed
    "location=kaohsiung",
    "location=taipei",  # more than a page: total > count
    "query=WebMCP&location=kaohsiung",
    "price=paid&level=advanced",
    "location=online&price=free&level=beginner",
    "query=&location=&price=&level=",  # empty means any
    "query=&location=kaohsiung",
    "query=no-event-has-this-word",  # zero results: requiresUserDecision, nextAction
    "location=online&price=paid",  # zero results with filters only
    "level=beginner&location=kaohsiung&price=free&query=Django",  # another order
]


@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "signed-in"])
@pytest.mark.parametrize("query", PARITY_QUERIES)
def test_search_result_is_the_api_body_for_the_same_conditions(events, user, query, signed_in):
    client = Client(headers=EN)
    if signed_in:
        client.force_login(user)
        SavedEventFactory(user=user, event=events["kaohsiung"])
        write_call(client, "save_event", events["intro"].public_id, "save")  # stateVersion 1
    result = island(search_call(client, query))
    api = client.get(f"/api/events?{query}")
    assert api.status_code == 200
    assert result == api.json()
    assert result["stateVersion"] == (1 if signed_in else 0)


def test_search_result_names_the_events_the_region_shows(en_client, events):
    response = search_call(en_client, "location=taipei")
    result = island(response)
    html = search_answer(response)
    assert (result["count"], result["total"], result["limit"], result["offset"]) == (10, 12, 10, 0)
    assert result["appliedFilters"] == {"location": "taipei"}
    shown = re.findall(r'<article class="event-card[^"]*"[^>]*>.*?href="/events/([^/]+)/', html, re.S)
    assert shown == [event["id"] for event in result["events"]]


def test_an_omitted_condition_is_no_condition_whatever_the_page_showed(en_client, events):
    page = f"{ORIGIN}/events/?location=kaohsiung&level=intermediate&price=paid"
    response = search_call(en_client, "query=WebMCP", page=page)
    result = island(response)
    assert result["appliedFilters"] == {"query": "WebMCP"}
    assert [event["id"] for event in result["events"]] == [
        "evt-webmcp-kaohsiung",
        "evt-webmcp-intro",  # in Taipei, though the page showed Kaohsiung
        events["online"].public_id,  # online, free and for beginners
    ]
    html = search_answer(response)
    assert "WebMCP 入門工作坊" in html and "Agent UX online" in html
    assert "Django night" not in html
    assert shown_conditions(html) == {**ANY, "query": "WebMCP"}


@pytest.mark.parametrize(
    ("query", "conditions"),
    [
        ("", ANY),
        ("query=WebMCP&price=paid", {**ANY, "query": "WebMCP", "price": "paid"}),
        (
            "level=advanced&location=kaohsiung&price=paid&query=Django",
            {"query": "Django", "location": "kaohsiung", "price": "paid", "level": "advanced"},
        ),
        ("query=&location=online&price=", {**ANY, "location": "online"}),
        ("query=++WebMCP+", {**ANY, "query": "WebMCP"}),
    ],
)
def test_the_regions_form_shows_exactly_the_calls_conditions(en_client, events, query, conditions):
    page = f"{ORIGIN}/events/?query=Other&location=taipei&price=free&level=beginner"
    html = search_answer(search_call(en_client, query, page=page))
    assert shown_conditions(html) == conditions


def test_the_search_answer_is_the_list_pages_form_results_and_tools(en_client, events):
    response = search_call(en_client, "query=WebMCP")
    html = search_answer(response)
    assert 'id="search-form"' in html
    assert '<section id="results"' in html
    assert "WebMCP meetup in Kaohsiung" in html
    manifest = manifest_in(html)
    assert manifest["route"] == "event-list"
    assert {"search_events", "get_event_details", "save_event"} <= set(manifest_tools(html))
    assert_private(response)


@pytest.mark.parametrize(
    ("query", "push_url"),
    [
        ("", "/events/"),
        ("query=WebMCP", "/events/?query=WebMCP"),
        ("query=&location=&price=&level=", "/events/"),
        ("query=&location=kaohsiung&price=", "/events/?location=kaohsiung"),
        ("query=++WebMCP+", "/events/?query=WebMCP"),
    ],
)
def test_the_page_address_becomes_the_calls_search(en_client, events, query, push_url):
    assert search_call(en_client, query)["HX-Push-Url"] == push_url


def test_the_pushed_address_holds_every_condition_and_nothing_else(en_client, events):
    response = search_call(en_client, "level=advanced&query=Django&price=paid&location=kaohsiung")
    pushed = urlsplit(response["HX-Push-Url"])
    assert pushed.path == LIST
    assert dict(parse_qsl(pushed.query, keep_blank_values=True)) == {
        "query": "Django",
        "location": "kaohsiung",
        "price": "paid",
        "level": "advanced",
    }
    # and that address, opened by a person, shows the same events
    page = en_client.get(response["HX-Push-Url"]).content.decode()
    assert "Django night" in page
    assert "WebMCP meetup in Kaohsiung" not in page  # Kaohsiung and paid, but not advanced


@pytest.mark.parametrize(
    ("query", "reason", "fields"),
    [
        ("query=WebMCP&colour=blue", "UNKNOWN_PARAMETER", ["colour"]),
        ("page=2", "UNKNOWN_PARAMETER", ["page"]),  # the tool has no paging
        ("limit=50", "UNKNOWN_PARAMETER", ["limit"]),
        ("location=taipei&location=online", "VALIDATION_ERROR", ["location"]),
        ("location=mars", "VALIDATION_ERROR", ["location"]),
        ("level=guru&price=cheap", "VALIDATION_ERROR", ["level", "price"]),
        ("query=" + "x" * 101, "VALIDATION_ERROR", ["query"]),
    ],
)
def test_an_invalid_search_is_refused_with_the_envelope_and_nothing_rendered(
    signed_in_en_client, user, events, query, reason, fields
):
    write_call(signed_in_en_client, "save_event", events["intro"].public_id, "save")  # stateVersion 1
    before = activity()
    body = refusal(search_call(signed_in_en_client, query), 400, "INVALID_INPUT", reason)
    assert sorted(body["fields"]) == fields
    assert body["stateVersion"] == 1
    # No search ran, and the refused call is one row: its outcome is the reason.
    assert activity() == [*before, ("search_events", "agent", reason)]


def test_the_api_refuses_the_same_unknown_parameter(en_client, events):
    tool = search_call(en_client, "query=WebMCP&colour=blue").json()
    api = en_client.get("/api/events?query=WebMCP&colour=blue").json()
    assert tool == api


def test_a_search_call_records_one_agent_search(en_client, events):
    island(search_call(en_client, "query=WebMCP", page=f"{ORIGIN}/events/?location=kaohsiung"))
    assert activity() == [("search_events", "agent", "OK")]


def test_a_header_that_names_no_tool_gets_the_persons_page(en_client, events):
    response = en_client.get(f"{LIST}?location=kaohsiung", headers={"X-WebMCP-Tool": "search events"})
    html = response.content.decode()
    assert "<html" in html
    assert not ISLAND.search(html)
    assert activity() == [("search_events", "ui", "OK")]


# ── writes: POST /events/<id>/save|register|cancel/ ──────────────────────────────────────────


def test_save_call_from_the_detail_page_returns_its_region_and_the_api_body(
    signed_in_en_client, user, other_user, events
):
    intro = events["intro"]
    page = f"{ORIGIN}/events/{intro.public_id}/"
    response = write_call(signed_in_en_client, "save_event", intro.public_id, "save", page=page)
    result = island(response)
    html = region(response)
    assert SavedEvent.objects.filter(user=user, event=intro).count() == 1
    other = Client(headers=EN)
    other.force_login(other_user)
    api = other.put(f"/api/me/saved/{intro.public_id}", content_type="application/json")
    assert result == api.json()
    assert result == {
        "ok": True,
        "eventId": intro.public_id,
        "saved": True,
        "alreadySaved": False,
        "uiUpdated": False,
        "stateVersion": 1,
    }
    assert 'id="event-title"' in html and 'aria-pressed="true"' in html  # the page shows it saved
    assert manifest_in(html)["route"] == "event-detail"
    assert manifest_in(html)["stateVersion"] == 1
    assert not response.has_header("HX-Push-Url")
    assert_private(response)
    assert activity() == [("save_event", "agent", "OK"), ("save_event", "api", "OK")]


def test_saving_twice_says_already_saved_and_writes_nothing_more(signed_in_en_client, user, events):
    intro = events["intro"]
    write_call(signed_in_en_client, "save_event", intro.public_id, "save")
    result = island(write_call(signed_in_en_client, "save_event", intro.public_id, "save"))
    assert (result["alreadySaved"], result["stateVersion"]) == (True, 1)
    assert SavedEvent.objects.filter(user=user).count() == 1
    assert activity() == [("save_event", "agent", "OK"), ("save_event", "agent", "ALREADY_SAVED")]


def test_save_call_from_the_list_answers_with_that_card_only(signed_in_en_client, user, events):
    kaohsiung = events["kaohsiung"]
    page = f"{ORIGIN}/events/?location=kaohsiung&price=paid"
    response = write_call(signed_in_en_client, "save_event", kaohsiung.public_id, "save", page=page)
    result = island(response)
    html = ISLAND.sub("", response.content.decode()).strip()
    assert result["eventId"] == kaohsiung.public_id and result["saved"] is True
    # The parts it replaces, by id: the messages, the saved event's card, the manifest.
    ids = re.findall(r'^\s*<(?:div|article|script)\b[^>]*?\sid="([^"]+)"', html, re.M)
    assert ids == ["messages", f"event-{kaohsiung.public_id}", "webmcp-manifest"], ids
    assert "data-webmcp-region" not in html and "<html" not in html
    assert manifest_in(html)["route"] == "event-list"
    assert "badge-saved" in html and "WebMCP meetup in Kaohsiung" in html  # it shows the save
    assert "Django night" not in html  # the rest of the list is left as it is, not searched again
    assert "?from=location%3Dkaohsiung%26price%3Dpaid" in html  # its link leads back to that list
    assert not response.has_header("HX-Push-Url")  # the page stays where it was
    # One call, one row: drawing the card searched nothing on anyone's behalf.
    assert activity() == [("save_event", "agent", "OK")]


def test_a_page_of_another_site_is_ignored_and_the_events_page_is_drawn(signed_in_en_client, events):
    intro = events["intro"]
    page = "https://evil.example/events/?location=kaohsiung"
    html = region(write_call(signed_in_en_client, "save_event", intro.public_id, "save", page=page))
    assert manifest_in(html)["route"] == "event-detail"
    assert 'id="event-title"' in html


def test_register_call_registers_once_and_the_region_follows_the_new_state(
    signed_in_en_client, user, other_user, events
):
    intro = events["intro"]
    page = f"{ORIGIN}/events/{intro.public_id}/"
    response = write_call(signed_in_en_client, "register_event", intro.public_id, "register", page=page)
    result = island(response)
    registration = Registration.objects.get(user=user, event=intro)
    assert registration.status == RegistrationStatus.CONFIRMED
    run_tasks()
    assert Notification.objects.filter(user=user, event=intro).count() == 1  # one confirmation e-mail
    assert result["registration"]["eventId"] == intro.public_id
    assert result["registration"]["status"] == "confirmed"
    assert (result["alreadyRegistered"], result["stateVersion"], result["ok"]) == (False, 1, True)
    other = Client(headers=EN)
    other.force_login(other_user)
    api = other.post(f"/api/events/{intro.public_id}/registration", content_type="application/json").json()
    for body in (result, api):
        body["registration"].pop("updatedAt")
    assert result == api
    html = region(response)
    assert "You are registered for this event." in html
    tools = manifest_tools(html)
    assert "register_event" not in tools
    assert tools["cancel_registration"]["confirm"] is True
    assert 'data-webmcp-confirm="cancel_registration"' in html
    assert activity() == [("register_event", "agent", "OK"), ("register_event", "api", "OK")]


def test_cancel_call_skips_the_are_you_sure_page(signed_in_en_client, user, other_user, events):
    intro = events["intro"]
    RegistrationFactory(user=user, event=intro)
    RegistrationFactory(user=other_user, event=intro)
    page = f"{ORIGIN}/events/{intro.public_id}/"
    response = write_call(signed_in_en_client, "cancel_registration", intro.public_id, "cancel", page=page)
    result = island(response)
    html = region(response)
    assert Registration.objects.get(user=user, event=intro).status == RegistrationStatus.CANCELLED
    assert "Cancel your registration?" not in html and 'name="confirm"' not in html
    assert "Your registration is cancelled." in html
    assert 'id="register-form"' in html
    assert (result["registration"]["status"], result["alreadyCancelled"]) == ("cancelled", False)
    other = Client(headers=EN)
    other.force_login(other_user)
    api = other.delete(f"/api/events/{intro.public_id}/registration").json()
    for body in (result, api):
        body["registration"].pop("updatedAt")
    assert result == api
    assert activity() == [("cancel_registration", "agent", "OK"), ("cancel_registration", "api", "OK")]


def test_cancel_call_from_my_events_returns_my_events(signed_in_en_client, user, events):
    going, staying = events["intro"], events["kaohsiung"]
    RegistrationFactory(user=user, event=going)
    RegistrationFactory(user=user, event=staying)
    page = f"{ORIGIN}/me/"
    response = write_call(signed_in_en_client, "cancel_registration", going.public_id, "cancel", page=page)
    result = island(response)
    html = region(response)
    assert result["registration"] == {
        "eventId": going.public_id,
        "status": "cancelled",
        "ticketType": "general",
        "updatedAt": result["registration"]["updatedAt"],
        "answers": {},
        "payment": None,
    }
    assert manifest_in(html)["route"] == "me"
    confirmed, _, cancelled = html.partition("Cancelled registrations")
    assert "WebMCP meetup in Kaohsiung" in confirmed and "WebMCP 入門工作坊" in cancelled
    # still one cancellable registration: the tool stays, with its confirm form for that row only
    assert manifest_tools(html)["cancel_registration"]["confirm"] is True
    assert html.count('data-webmcp-confirm="cancel_registration"') == 1
    assert activity() == [("cancel_registration", "agent", "OK")]


def test_the_last_cancel_on_my_events_removes_the_tool(signed_in_en_client, user, events):
    RegistrationFactory(user=user, event=events["intro"])
    page = f"{ORIGIN}/me/"
    html = region(
        write_call(signed_in_en_client, "cancel_registration", "evt-webmcp-intro", "cancel", page=page)
    )
    assert "cancel_registration" not in manifest_tools(html)
    assert "data-webmcp-confirm" not in html


# ── refusals ──────────────────────────────────────────────────────────────────────────────────


def test_anonymous_register_call_is_told_to_sign_in(en_client, events):
    intro = events["intro"]
    response = write_call(en_client, "register_event", intro.public_id, "register")
    body = refusal(response, 401, "AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert body["stateVersion"] == 0
    assert "/accounts/login/" in body["nextAction"]
    assert not Registration.objects.exists()
    assert activity() == [("register_event", "agent", "SIGN_IN_REQUIRED")]
    assert_private(response)


def test_a_refused_write_records_one_row_and_writes_nothing(signed_in_en_client, user, other_user):
    full = EventFactory(capacity=1)
    RegistrationFactory(user=other_user, event=full)
    write_call(signed_in_en_client, "save_event", full.public_id, "save")  # stateVersion 1
    response = write_call(signed_in_en_client, "register_event", full.public_id, "register")
    body = refusal(response, 409, "CONFLICT", "EVENT_FULL")
    assert body["stateVersion"] == 1
    assert not Registration.objects.filter(user=user).exists()
    assert activity() == [("save_event", "agent", "OK"), ("register_event", "agent", "EVENT_FULL")]


@pytest.mark.parametrize(
    ("tool", "action", "status", "code", "reason"),
    [
        ("save_event", "save", 404, "NOT_FOUND", "EVENT_NOT_FOUND"),
        ("register_event", "register", 404, "NOT_FOUND", "EVENT_NOT_FOUND"),
        ("cancel_registration", "cancel", 404, "NOT_FOUND", "EVENT_NOT_FOUND"),
    ],
)
def test_an_unknown_event_is_the_not_found_envelope_not_the_404_page(
    signed_in_en_client, tool, action, status, code, reason
):
    refusal(write_call(signed_in_en_client, tool, "evt-nothing", action), status, code, reason)
    assert activity() == [(tool, "agent", reason)]


def test_cancel_without_a_registration_is_refused(signed_in_en_client, events):
    response = write_call(signed_in_en_client, "cancel_registration", events["intro"].public_id, "cancel")
    refusal(response, 404, "NOT_FOUND", "REGISTRATION_NOT_FOUND")
    assert activity() == [("cancel_registration", "agent", "REGISTRATION_NOT_FOUND")]


@pytest.mark.parametrize(
    ("tool", "action"),
    [("save_event", "save"), ("register_event", "register"), ("cancel_registration", "cancel")],
)
@pytest.mark.parametrize(
    "body",
    [
        {"note": "x"},
        {"event_id": "evt-webmcp-intro"},  # the id is the path's; the runtime never sends it twice
        {"confirm": "yes"},
    ],
)
def test_a_body_with_any_key_is_refused_as_unknown_and_nothing_is_written(
    signed_in_en_client, user, events, tool, action, body
):
    RegistrationFactory(user=user, event=events["kaohsiung"])
    event_id = events["kaohsiung"].public_id if tool == "cancel_registration" else events["intro"].public_id
    response = write_call(signed_in_en_client, tool, event_id, action, body)
    envelope = refusal(response, 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert list(envelope["fields"]) == list(body)
    assert envelope["stateVersion"] == 0
    assert not SavedEvent.objects.exists()
    assert list(Registration.objects.values_list("event__public_id", "status")) == [
        (events["kaohsiung"].public_id, RegistrationStatus.CONFIRMED)
    ]
    assert activity() == [(tool, "agent", "UNKNOWN_PARAMETER")]  # the refused call, no write


@pytest.mark.parametrize("body", ["{", "not json", "[]", '["note"]', "null", "3"])
def test_a_body_that_is_no_json_object_is_refused(signed_in_en_client, events, body):
    response = write_call(signed_in_en_client, "save_event", events["intro"].public_id, "save", body)
    refusal(response, 400, "INVALID_INPUT", "VALIDATION_ERROR")
    assert not SavedEvent.objects.exists()
    assert activity() == [("save_event", "agent", "VALIDATION_ERROR")]


def test_an_empty_object_is_no_input(signed_in_en_client, user, events):
    island(write_call(signed_in_en_client, "save_event", events["intro"].public_id, "save", {}))
    assert SavedEvent.objects.filter(user=user).count() == 1


def test_a_malformed_event_id_in_the_path_is_refused(signed_in_en_client):
    response = write_call(signed_in_en_client, "save_event", "EVT 1", "save")
    body = refusal(response, 400, "INVALID_INPUT", "VALIDATION_ERROR")
    assert "event_id" in body["fields"]
    assert activity() == [("save_event", "agent", "VALIDATION_ERROR")]
    assert Activity.objects.get().event is None  # a malformed id names no event


def test_writes_beyond_the_rate_are_refused_with_retry_after(settings, signed_in_en_client, user, events):
    settings.WRITE_THROTTLE_RATES = {"writes": "2/min"}
    intro, kaohsiung, django_night = events["intro"], events["kaohsiung"], events["django"]
    island(write_call(signed_in_en_client, "save_event", intro.public_id, "save"))
    island(write_call(signed_in_en_client, "save_event", kaohsiung.public_id, "save"))
    response = write_call(signed_in_en_client, "save_event", django_night.public_id, "save")
    body = refusal(response, 429, "TEMPORARY_FAILURE", "RATE_LIMITED")
    assert body["retryable"] is True
    assert type(body["retryAfter"]) is int and 0 < body["retryAfter"] <= 60
    assert response["Retry-After"] == str(body["retryAfter"])
    assert body["stateVersion"] == 2
    assert not SavedEvent.objects.filter(event=django_night).exists()
    assert len(activity()) == 2
    # The rate is the API's: a person's form post is not a tool call and is not counted.
    signed_in_en_client.post(f"/events/{django_night.public_id}/save/")
    assert SavedEvent.objects.filter(event=django_night).exists()


def test_the_write_rate_is_per_visitor(settings, signed_in_en_client, other_user, events):
    settings.WRITE_THROTTLE_RATES = {"writes": "1/min"}
    island(write_call(signed_in_en_client, "save_event", events["intro"].public_id, "save"))
    other = Client(headers=EN)
    other.force_login(other_user)
    island(write_call(other, "save_event", events["intro"].public_id, "save"))


# ── one act, one Activity row ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("page", [None, "detail", "list", "me"])
def test_a_save_call_records_exactly_one_row_whatever_page_is_redrawn(signed_in_en_client, events, page):
    intro = events["intro"]
    pages = {
        None: None,
        "detail": f"{ORIGIN}/events/{intro.public_id}/",
        "list": f"{ORIGIN}/events/?query=WebMCP",
        "me": f"{ORIGIN}/me/",
    }
    island(write_call(signed_in_en_client, "save_event", intro.public_id, "save", page=pages[page]))
    assert activity() == [("save_event", "agent", "OK")]


def test_a_persons_htmx_save_records_exactly_one_row(signed_in_en_client, user, events):
    response = signed_in_en_client.post(
        f"/events/{events['intro'].public_id}/save/", headers={"HX-Request": "true"}
    )
    html = region(response)
    assert not ISLAND.search(response.content.decode())  # a person gets no tool result
    assert 'aria-pressed="true"' in html
    assert activity() == [("save_event", "ui", "OK")]


def test_a_persons_htmx_register_records_exactly_one_row(signed_in_en_client, user, events):
    signed_in_en_client.post(f"/events/{events['intro'].public_id}/register/", headers={"HX-Request": "true"})
    assert activity() == [("register_event", "ui", "OK")]


# ── CSRF ──────────────────────────────────────────────────────────────────────────────────────


CSRF_SECRET = "k" * 32  # Django accepts the unmasked secret as the header token


def csrf_client(user) -> Client:
    client = Client(enforce_csrf_checks=True, headers=EN)
    client.force_login(user)
    client.cookies["csrftoken"] = CSRF_SECRET
    return client


def test_a_tool_write_without_the_csrf_token_is_refused_and_writes_nothing(user, events):
    client = csrf_client(user)
    response = write_call(client, "save_event", events["intro"].public_id, "save")
    assert response.status_code == 403
    assert not SavedEvent.objects.exists()
    assert activity() == []


def test_a_tool_write_with_the_csrf_token_goes_through(user, events):
    """The control for the test above: the runtime sends X-CSRFToken, and then the call works."""
    client = csrf_client(user)
    response = client.post(
        f"/events/{events['intro'].public_id}/save/",
        data="",
        content_type="application/json",
        headers={**tool_headers("save_event"), "X-CSRFToken": CSRF_SECRET},
    )
    assert island(response)["saved"] is True
    assert activity() == [("save_event", "agent", "OK")]


def test_a_csrf_refusal_of_a_tool_call_is_the_envelope(user, events):
    """The runtime reads a JSON answer as the call's envelope; an HTML error page is no answer it can
    give the agent (it reports it as a lost call with no reason)."""
    client = csrf_client(user)
    response = write_call(client, "save_event", events["intro"].public_id, "save")
    body = refusal(response, 403, "PERMISSION_DENIED", "CSRF_FAILED")
    assert body["stateVersion"] == 0
