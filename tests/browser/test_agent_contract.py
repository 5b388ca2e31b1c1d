"""The agent contract in Chromium: what a call costs (requests, Activity rows), stateless search, and
the person's press before every consequential call, on every route that offers one."""

from __future__ import annotations

from contextlib import contextmanager
from urllib.parse import parse_qs, urlparse

import pytest

from events.choices import RegistrationStatus
from events.models import Activity, Registration, SavedEvent
from harness.tools import (
    finish_tool_call,
    start_tool_call,
    tool_call_pending,
    visible_event_ids,
    wait_for_tools,
)

pytestmark = pytest.mark.browser

LIST_TOOLS = {"search_events", "get_event_details", "save_event"}
OPEN = {"get_event_details", "save_event", "register_event"}
REGISTERED = {"get_event_details", "save_event", "cancel_registration"}
ARG_01 = {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"}


@contextmanager
def site_requests(page, server: str):
    """Every request to the site that is not a static file, made while the block runs."""
    seen: list[str] = []

    def record(request) -> None:
        if request.url.startswith(server) and not urlparse(request.url).path.startswith("/static/"):
            seen.append(f"{request.method} {request.url[len(server) :]}")

    page.on("request", record)
    try:
        yield seen
        page.wait_for_timeout(300)  # anything the answer would set off has started by now
    finally:
        page.remove_listener("request", record)


def form_values(page) -> dict[str, str]:
    return {
        name: page.locator(f"#search-form [name={name}]").input_value()
        for name in ("query", "location", "price", "level")
    }


# ---- stateless search ------------------------------------------------------------------------


def test_after_zero_results_a_keyword_only_search_finds_events(page):
    """ARG-01 then "find WebMCP events": the second call is judged on its own input alone."""
    page.goto("/events/")
    wait_for_tools(page, LIST_TOOLS)
    first = page.webmcp.call_tool("search_events", ARG_01)
    assert first["count"] == 0 and first["appliedFilters"] == ARG_01
    second = page.webmcp.call_tool("search_events", {"query": "WebMCP"})
    assert second["appliedFilters"] == {"query": "WebMCP"}
    assert "evt-webmcp-intro" in [event["id"] for event in second["events"]]
    # The person sees exactly that search: the form, the list and the address.
    assert form_values(page) == {"query": "WebMCP", "location": "", "price": "", "level": ""}
    assert visible_event_ids(page) == [event["id"] for event in second["events"]]
    assert parse_qs(urlparse(page.url).query) == {"query": ["WebMCP"]}


def test_filters_in_the_url_do_not_leak_into_a_call(page):
    page.goto("/events/?location=kaohsiung&level=advanced")
    wait_for_tools(page, LIST_TOOLS)
    assert form_values(page)["location"] == "kaohsiung"
    result = page.webmcp.call_tool("search_events", {"query": "WebMCP"})
    assert result["appliedFilters"] == {"query": "WebMCP"}
    assert "evt-webmcp-intro" in [event["id"] for event in result["events"]]
    assert form_values(page) == {"query": "WebMCP", "location": "", "price": "", "level": ""}


@pytest.mark.parametrize("cleared", [{}, {"location": ""}, {"location": None}])
def test_omitted_empty_and_null_all_mean_no_condition(page, cleared):
    page.goto("/events/")
    wait_for_tools(page, LIST_TOOLS)
    page.webmcp.call_tool("search_events", {"location": "online"})
    result = page.webmcp.call_tool("search_events", {"query": "Django", **cleared})
    assert result["appliedFilters"] == {"query": "Django"}
    assert form_values(page)["location"] == ""


def test_a_bad_enum_value_gets_our_envelope_and_changes_nothing(page):
    page.goto("/events/?location=online")
    wait_for_tools(page, LIST_TOOLS)
    shown = visible_event_ids(page)
    result = page.webmcp.call_tool("search_events", {"level": "expert"})
    assert (result["ok"], result["code"], result["reason"]) == (False, "INVALID_INPUT", "VALIDATION_ERROR")
    assert "level" in result["fields"] and "stateVersion" in result
    assert result["uiUpdated"] is False
    assert visible_event_ids(page) == shown and "location=online" in page.url


# ---- one request, one Activity row -------------------------------------------------------------


def test_each_read_costs_one_request_and_one_activity_row(page, server, orm):
    page.goto("/events/")
    wait_for_tools(page, LIST_TOOLS)
    before = Activity.objects.count()
    with site_requests(page, server) as seen:
        result = page.webmcp.call_tool("search_events", {"location": "taipei"})
    assert result["ok"] is True and result["uiUpdated"] is True
    assert len(seen) == 1, seen
    rows = list(Activity.objects.order_by("-id")[: Activity.objects.count() - before])
    assert [(row.action, row.mode) for row in rows] == [("search_events", "agent")]

    before = Activity.objects.count()
    with site_requests(page, server) as seen:
        page.webmcp.call_tool("get_event_details", {"event_id": "evt-webmcp-intro"})
    assert len(seen) == 1, seen
    assert list(Activity.objects.order_by("-id").values_list("action", "mode")[:1]) == [
        ("get_event_details", "agent")
    ]
    assert Activity.objects.count() == before + 1


def test_a_refused_call_costs_one_request_and_one_activity_row(page, server, orm):
    page.goto("/events/")
    wait_for_tools(page, LIST_TOOLS)
    before = Activity.objects.count()
    with site_requests(page, server) as seen:
        result = page.webmcp.call_tool("save_event", {"event_id": "evt-no-such-event"})
    assert (result["code"], result["reason"]) == ("NOT_FOUND", "EVENT_NOT_FOUND")
    assert len(seen) == 1, seen
    assert Activity.objects.count() == before + 1
    row = Activity.objects.latest("id")
    assert (row.action, row.mode, row.outcome) == ("save_event", "agent", "EVENT_NOT_FOUND")


def test_a_save_costs_one_request_and_one_row_and_the_list_shows_it(page, server, orm):
    page.goto("/events/?query=WebMCP")
    wait_for_tools(page, LIST_TOOLS)
    assert "evt-webmcp-intro" in visible_event_ids(page)
    before = Activity.objects.count()
    with site_requests(page, server) as seen:
        result = page.webmcp.call_tool("save_event", {"event_id": "evt-webmcp-intro"})
    assert result["ok"] is True and result["uiUpdated"] is True
    assert len(seen) == 1, seen
    assert Activity.objects.count() == before + 1
    card = page.locator('#results [data-event-id="evt-webmcp-intro"]')
    assert card.locator(".badge-saved").count() == 1
    assert "query=WebMCP" in page.url  # the list the person was looking at, redrawn


def test_a_confirmed_register_and_cancel_cost_one_request_and_one_row_each(
    page, server, sign_in, make_user, make_event
):
    event = make_event("evt-browser-cost", capacity=5)
    user = make_user()
    sign_in(user)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, OPEN)
    for tool, form, after in (
        ("register_event", "#register-form", REGISTERED),
        ("cancel_registration", "#cancel-form", OPEN),
    ):
        before = Activity.objects.filter(user=user).count()
        with site_requests(page, server) as seen:
            start_tool_call(page, tool, {})
            page.wait_for_selector(f"{form}[data-webmcp-pending]")
            assert seen == [], "nothing is sent before the person presses"
            page.locator(f"{form} button[type=submit]").click()
            result = finish_tool_call(page)
        assert result["ok"] is True and result["uiUpdated"] is True
        assert len(seen) == 1, seen
        rows = Activity.objects.filter(user=user).order_by("id")[before:]
        assert [(row.action, row.mode) for row in rows] == [(tool, "agent")]
        wait_for_tools(page, after)


# ---- the person's press ------------------------------------------------------------------------


def test_declining_sends_nothing_and_says_user_cancelled(page, server, sign_in, make_user, make_event):
    event = make_event("evt-browser-decline", capacity=5)
    user = make_user()
    sign_in(user)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, OPEN)
    with site_requests(page, server) as seen:
        start_tool_call(page, "register_event", {})
        page.wait_for_selector("#register-form[data-webmcp-pending]")
        page.locator("#register-form .webmcp-confirm button[type=reset]").click()
        result = finish_tool_call(page)
    assert (result["ok"], result["code"], result["reason"]) == (False, "USER_CANCELLED", "FORM_RESET")
    assert seen == []
    assert not Registration.objects.filter(user=user).exists()
    assert page.locator("#register-form[data-webmcp-pending]").count() == 0
    wait_for_tools(page, OPEN)


def test_cancel_on_my_page_waits_for_the_press_of_that_registrations_button(
    page, server, sign_in, make_user, make_event
):
    kept, dropped = make_event("evt-browser-me-kept"), make_event("evt-browser-me-dropped")
    user = make_user()
    Registration.objects.create(user=user, event=kept)
    Registration.objects.create(user=user, event=dropped)
    sign_in(user)
    page.goto("/me/")
    wait_for_tools(page, {"cancel_registration"})

    outside = page.webmcp.call_tool("cancel_registration", {"event_id": "evt-webmcp-intro"})
    assert (outside["code"], outside["reason"]) == ("INVALID_INPUT", "NOT_ON_THIS_PAGE")

    with site_requests(page, server) as seen:
        start_tool_call(page, "cancel_registration", {"event_id": dropped.public_id})
        pending = page.locator("form[data-webmcp-pending]")
        pending.wait_for()
        assert pending.get_attribute("action") == f"/events/{dropped.public_id}/cancel/"
        page.wait_for_timeout(300)
        assert tool_call_pending(page) and seen == []
        assert Registration.objects.get(user=user, event=dropped).status == RegistrationStatus.CONFIRMED
        pending.locator("button[type=submit]").click()
        result = finish_tool_call(page)
    assert result["ok"] is True and result["registration"]["eventId"] == dropped.public_id
    assert result["uiUpdated"] is True and len(seen) == 1, seen
    assert Registration.objects.get(user=user, event=dropped).status == RegistrationStatus.CANCELLED
    assert Registration.objects.get(user=user, event=kept).status == RegistrationStatus.CONFIRMED


def test_bad_input_to_a_confirmed_tool_is_refused_before_asking_the_person(
    page, sign_in, make_user, make_event
):
    event = make_event("evt-browser-me-bad")
    user = make_user()
    Registration.objects.create(user=user, event=event)
    sign_in(user)
    page.goto("/me/")
    wait_for_tools(page, {"cancel_registration"})
    result = page.webmcp.call_tool("cancel_registration", {"event_id": event.public_id, "reason": "x"})
    assert (result["code"], result["reason"]) == ("INVALID_INPUT", "VALIDATION_ERROR")
    assert "reason" in result["fields"]
    assert page.locator("form[data-webmcp-pending]").count() == 0
    assert SavedEvent.objects.filter(user=user).count() == 0
    assert Registration.objects.get(user=user, event=event).status == RegistrationStatus.CONFIRMED
