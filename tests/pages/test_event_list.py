"""/events/: the search form, htmx partial, zero results, pagination and invalid parameters."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from events.choices import Level, Location
from events.contract import EventSearchInput
from events.models import Activity
from tests.factories import EventFactory, SavedEventFactory

from .conftest import DECLARATIVE_TOOL_ATTRIBUTES, HTMX, manifest_tools

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/events/"


def test_event_list_url_name():
    assert reverse("event-list") == URL


def test_search_form_markup_is_a_plain_form_for_people(en_client, event):
    """The search form is for people; agents get search_events from the manifest, with the whole
    contract (a declarative form would reach them without maxLength or additionalProperties)."""
    html = en_client.get(URL).content.decode()
    form = re.search(r'<form id="search-form"[^>]*>', html).group(0)
    assert 'method="get"' in form
    assert f'action="{URL}"' in form
    assert f'hx-get="{URL}"' in form
    assert 'hx-target="#results"' in form
    assert 'hx-push-url="true"' in form
    for attribute in DECLARATIVE_TOOL_ATTRIBUTES:
        assert attribute not in html, attribute
    assert "data-webmcp-confirm" not in form  # a read never waits for a press
    for name in ("query", "location", "price", "level"):
        assert re.search(rf'<label for="id_{name}">', html), name
    assert 'maxlength="100"' in html
    assert '<section id="results" aria-live="polite"' in html


def test_list_manifest_offers_search_events_on_the_list_route(en_client, event):
    html = en_client.get(URL).content.decode()
    search = manifest_tools(html)["search_events"]
    assert search["binding"] == "input"
    assert (search["method"], search["endpoint"]) == ("GET", URL)  # one request: the page itself
    assert "confirm" not in search and "autosubmit" not in search
    schema = search["inputSchema"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["query"]["maxLength"] == 100
    for name, field in EventSearchInput().fields.items():  # what an agent reads about each parameter
        assert schema["properties"][name]["description"] == str(field.help_text), name
    assert '<main id="main" data-webmcp-region' in html  # the region a tool call answers with


def test_full_page_lists_upcoming_published_events_with_their_facts(en_client, event):
    EventFactory(title="Paid Django deep dive", paid=True, level=Level.ADVANCED, capacity=30)
    EventFactory(title="Old meetup", past=True)
    EventFactory(title="Secret draft", draft=True)
    html = en_client.get(URL).content.decode()
    assert "<html" in html
    assert "WebMCP 入門工作坊" in html
    assert f'href="/events/{event.public_id}/' in html
    assert "Paid Django deep dive" in html
    assert "TWD 500" in html
    assert "Free" in html
    assert "Advanced" in html
    assert "30 seats left" in html
    assert "Old meetup" not in html
    assert "Secret draft" not in html


def test_card_times_are_in_taipei(en_client):
    starts = datetime(2031, 3, 14, 1, 30, tzinfo=UTC)  # 09:30 in Taipei
    EventFactory(starts_at=starts, ends_at=starts + timedelta(hours=2))
    html = en_client.get(URL).content.decode()
    assert "Fri, Mar 14, 2031, 09:30–11:30" in html
    assert 'datetime="2031-03-14T09:30:00+08:00"' in html


def test_htmx_search_returns_only_the_results_partial(en_client, event):
    EventFactory(title="Kaohsiung night", location=Location.KAOHSIUNG)
    response = en_client.get(URL, {"location": "kaohsiung"}, headers={**HTMX, "HX-Target": "results"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert 'id="search-form"' not in html
    assert "Kaohsiung night" in html
    assert "WebMCP 入門工作坊" not in html


def test_htmx_request_for_another_target_gets_the_whole_page(en_client, event):
    """The WebMCP runtime refreshes the main region by selecting it from the full page."""
    html = en_client.get(URL, headers={**HTMX, "HX-Target": "main"}).content.decode()
    assert '<main id="main" data-webmcp-region' in html
    assert 'id="webmcp-manifest"' in html


def test_search_records_a_ui_search_through_the_use_case(en_client, event):
    en_client.get(URL, {"query": "WebMCP"})
    activity = Activity.objects.get(action="search_events")
    assert (activity.mode, activity.outcome) == ("ui", "OK")


def test_saved_events_carry_a_saved_badge(signed_in_en_client, user, event):
    SavedEventFactory(user=user, event=event)
    html = signed_in_en_client.get(URL).content.decode()
    assert "badge-saved" in html


def test_full_event_says_full(en_client, other_user):
    full = EventFactory(title="Tiny room", capacity=1)
    full.registrations.create(user=other_user)
    html = en_client.get(URL).content.decode()
    assert "badge-full" in html
    assert "seats-full" in html


def test_zero_results_names_every_condition_and_relaxes_none(en_client, event):
    response = en_client.get(
        URL, {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "No event matches all the chosen conditions" in html
    for label, value in (
        ("Keyword", "Agent"),
        ("Location", "Kaohsiung"),
        ("Price", "Paid"),
        ("Level", "Advanced"),
    ):
        assert f'<span class="chip-label">{label}</span> <strong>{value}</strong>' in html
    assert "Clear all filters" in html
    assert "WebMCP 入門工作坊" not in html  # nothing was relaxed to find "something"


def test_zero_results_in_the_htmx_partial_too(en_client, event):
    html = en_client.get(
        URL, {"location": "online"}, headers={**HTMX, "HX-Target": "results"}
    ).content.decode()
    assert "No event matches all the chosen conditions" in html


@pytest.mark.parametrize(
    "params",
    [
        {"location": "mars"},
        {"colour": "blue"},
        {"query": "x" * 101},
        {"page": "abc"},
        {"page": "522874014870663231092817920"},
    ],
)
def test_invalid_parameters_show_form_errors_and_no_results(en_client, event, params):
    response = en_client.get(URL, params)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Please check the search conditions" in html
    assert "WebMCP 入門工作坊" not in html


def test_invalid_parameters_in_htmx_show_the_errors_in_the_results(en_client, event):
    html = en_client.get(URL, {"level": "guru"}, headers={**HTMX, "HX-Target": "results"}).content.decode()
    assert "Please check the search conditions" in html


def test_pagination_has_ten_per_page_and_links_keep_the_filters(en_client):
    start = timezone.now() + timedelta(days=5)
    for number in range(23):
        EventFactory(title=f"Taipei talk {number:02d}", starts_at=start + timedelta(hours=number))
    EventFactory(title="Online talk", location=Location.ONLINE)
    first = en_client.get(URL, {"location": "taipei"}).content.decode()
    assert first.count('<article class="event-card') == 10
    assert "23 events found" in first
    assert "Taipei talk 00" in first and "Taipei talk 10" not in first
    assert 'href="/events/?location=taipei&amp;page=2"' in first
    assert 'href="/events/?location=taipei&amp;page=3"' in first
    third = en_client.get(URL, {"location": "taipei", "page": "3"}).content.decode()
    assert third.count('<article class="event-card') == 3
    assert "Taipei talk 22" in third
    assert 'href="/events/?location=taipei&amp;page=2"' in third


def test_page_beyond_the_last_says_so(en_client, event):
    html = en_client.get(URL, {"page": "9"}).content.decode()
    assert "There is no page 9" in html


def test_cards_link_to_the_detail_with_the_search_to_come_back_to(en_client, event):
    html = en_client.get(URL, {"location": "taipei", "price": "", "level": ""}).content.decode()
    assert f'href="/events/{event.public_id}/?from=location%3Dtaipei"' in html


def test_list_provides_webmcp_state(signed_in_en_client, event):
    response = signed_in_en_client.get(URL)
    assert response.context["webmcp_state"]["signed_in"] is True
    assert "stateVersion" in response.context["webmcp_state"]


def test_history_restore_gets_the_whole_page_and_responses_vary_on_htmx(en_client, event):
    response = en_client.get(
        URL, headers={**HTMX, "HX-Target": "results", "HX-History-Restore-Request": "true"}
    )
    assert "<html" in response.content.decode()
    assert "HX-Request" in response["Vary"]
