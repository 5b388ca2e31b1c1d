"""search_events, the use case: what matches, in which order, what is echoed, what is refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from events import actions
from events.models import Activity, Event
from events.selectors import search_events
from tests.factories import EventFactory, SavedEventFactory

from .conftest import MODES, activity

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def catalogue():
    """Three searchable events (created out of start order) and every kind that must never match."""
    soon = timezone.now() + timedelta(days=5)
    EventFactory(
        public_id="evt-webmcp-intro",
        title="WebMCP 入門工作坊",
        summary="從語意 HTML 到第一個網站 Tool。",
        starts_at=soon + timedelta(days=2),
    )
    EventFactory(
        public_id="evt-agent-kh",
        title="AI Agent 實戰",
        summary="Build one.",
        location="kaohsiung",
        level="intermediate",
        paid=True,
        starts_at=soon + timedelta(days=1),
    )
    EventFactory(
        public_id="evt-online-a11y",
        title="無障礙設計線上講座",
        summary="Accessible agents",
        location="online",
        level="advanced",
        starts_at=soon,
    )
    # Never searchable, although each matches "WebMCP" and the default filters.
    EventFactory(public_id="evt-past", title="WebMCP 回顧", past=True)
    EventFactory(
        public_id="evt-in-progress",
        title="WebMCP 進行中",
        starts_at=timezone.now() - timedelta(minutes=30),
        ends_at=timezone.now() + timedelta(hours=1),
    )
    EventFactory(public_id="evt-draft", title="WebMCP 草稿", draft=True)
    EventFactory(public_id="evt-cancelled", title="WebMCP 取消場", cancelled=True)


def search(visitor, **conditions):
    return search_events(visitor=visitor, **conditions)


def ids(result) -> list[str]:
    return [event.public_id for event in result.events]


def test_only_published_upcoming_events_ordered_by_start(catalogue, nobody):
    result = search(nobody)
    assert ids(result) == ["evt-online-a11y", "evt-agent-kh", "evt-webmcp-intro"]
    assert result.total == 3 and result.count == 3
    assert result.applied_filters == {}


def test_events_starting_at_the_same_time_keep_a_stable_order(nobody):
    starts = timezone.now() + timedelta(days=3)
    first, second, third = (EventFactory(starts_at=starts) for _ in range(3))
    assert ids(search(nobody)) == [first.public_id, second.public_id, third.public_id]


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param({"location": "taipei"}, ["evt-webmcp-intro"], id="location"),
        pytest.param({"price": "paid"}, ["evt-agent-kh"], id="price"),
        pytest.param({"level": "advanced"}, ["evt-online-a11y"], id="level"),
        pytest.param({"query": "agent"}, ["evt-online-a11y", "evt-agent-kh"], id="query-title-or-summary"),
        pytest.param({"query": "agent", "location": "online"}, ["evt-online-a11y"], id="query-and-location"),
        pytest.param({"query": "agent", "price": "paid"}, ["evt-agent-kh"], id="query-and-price"),
        pytest.param(
            {"location": "taipei", "price": "free", "level": "beginner"},
            ["evt-webmcp-intro"],
            id="three-filters",
        ),
        pytest.param(
            {"query": "WebMCP", "location": "taipei", "price": "free", "level": "beginner"},
            ["evt-webmcp-intro"],
            id="all-four",
        ),
    ],
)
def test_every_condition_must_hold(catalogue, nobody, conditions, expected):
    result = search(nobody, **conditions)
    assert ids(result) == expected
    assert result.total == len(expected)


@pytest.mark.parametrize(
    "conditions",
    [
        pytest.param({"query": "agent", "location": "taipei"}, id="query-matches-elsewhere"),
        pytest.param({"location": "kaohsiung", "price": "free"}, id="filters-match-separately"),
        pytest.param(
            {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"},
            id="one-condition-too-many",
        ),
        pytest.param({"query": "回顧"}, id="only-a-past-event-matches"),
    ],
)
def test_no_match_is_a_success_with_nothing_relaxed(catalogue, nobody, conditions):
    result = search(nobody, **conditions)
    assert result.events == [] and result.total == 0 and result.count == 0
    assert result.applied_filters == conditions


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("webmcp", ["evt-webmcp-intro"], id="lower-case-latin"),
        pytest.param("WEBMCP", ["evt-webmcp-intro"], id="upper-case-latin"),
        pytest.param("入門", ["evt-webmcp-intro"], id="cjk-in-title"),
        pytest.param("語意", ["evt-webmcp-intro"], id="cjk-in-summary"),
        pytest.param("線上講座", ["evt-online-a11y"], id="cjk-run"),
        pytest.param("  語意  ", ["evt-webmcp-intro"], id="surrounding-spaces-stripped"),
        pytest.param("語意 HTML", ["evt-webmcp-intro"], id="phrase-not-words"),
        pytest.param("HTML 語意", [], id="words-out-of-order-do-not-match"),
    ],
)
def test_query_is_a_case_insensitive_substring_of_title_or_summary(catalogue, nobody, query, expected):
    assert ids(search(nobody, query=query)) == expected


@pytest.mark.parametrize(
    "blank",
    [
        pytest.param({"query": ""}, id="empty-query"),
        pytest.param({"query": "   "}, id="spaces-query"),
        pytest.param({"query": None}, id="null-query"),
        pytest.param({"location": "", "price": "", "level": ""}, id="empty-filters"),
        pytest.param({"location": None, "price": None, "level": None}, id="null-filters"),
    ],
)
def test_a_blank_condition_is_no_condition(catalogue, nobody, blank):
    result = search(nobody, **blank)
    assert ids(result) == ["evt-online-a11y", "evt-agent-kh", "evt-webmcp-intro"]
    assert result.applied_filters == {}


@pytest.mark.parametrize(
    ("conditions", "applied"),
    [
        pytest.param({}, {}, id="none"),
        pytest.param({"query": "  agent "}, {"query": "agent"}, id="query-as-used-stripped"),
        pytest.param({"level": "advanced", "query": ""}, {"level": "advanced"}, id="blank-left-out"),
        pytest.param(
            {"query": "x", "location": "online", "price": "free", "level": "beginner"},
            {"query": "x", "location": "online", "price": "free", "level": "beginner"},
            id="all-four",
        ),
    ],
)
def test_applied_filters_are_exactly_the_conditions_used(catalogue, nobody, conditions, applied):
    assert search(nobody, **conditions).applied_filters == applied


def test_the_page_is_a_window_and_total_counts_every_match(catalogue, nobody):
    result = search(nobody, limit=2, offset=1)
    assert ids(result) == ["evt-agent-kh", "evt-webmcp-intro"]
    assert (result.count, result.total, result.limit, result.offset) == (2, 3, 2, 1)


def test_a_page_past_the_end_is_empty_but_still_counts_the_matches(catalogue, nobody):
    result = search(nobody, offset=10)
    assert result.events == [] and result.count == 0 and result.total == 3


def test_default_page_size_is_ten(nobody):
    EventFactory.create_batch(12)
    result = search(nobody)
    assert (result.count, result.total, result.limit, result.offset) == (10, 12, 10, 0)


def test_the_visitors_saved_events_on_the_page_are_marked(catalogue, person, anonymous):
    SavedEventFactory(user=person.user, event__public_id="evt-elsewhere")  # saved, not on the page
    SavedEventFactory(user=person.user, event=Event.objects.get(public_id="evt-agent-kh"))
    SavedEventFactory(
        user=None, visitor_token=anonymous.token, event=Event.objects.get(public_id="evt-online-a11y")
    )
    assert search(person, location="kaohsiung").saved_ids == {"evt-agent-kh"}
    assert search(person, location="online").saved_ids == frozenset()
    assert search(anonymous).saved_ids == {"evt-online-a11y"}


def test_the_result_never_depends_on_the_mode(catalogue, nobody):
    results = [actions.call("search_events", visitor=nobody, channel=mode, query="agent") for mode in MODES]
    assert {tuple(ids(result)) for result in results} == {("evt-online-a11y", "evt-agent-kh")}


# ── Activity ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("mode", MODES)
def test_each_call_records_one_row_with_its_mode(catalogue, person, mode):
    actions.call("search_events", visitor=person, channel=mode, query="nothing at all")
    assert activity() == [("search_events", mode, "OK")]
    row = Activity.objects.get()
    assert row.event_id is None and row.user == person.user


def test_a_page_redrawn_records_nothing(catalogue, person):
    assert (
        search_events(
            visitor=person,
        ).total
        == 3
    )
    assert activity() == []
