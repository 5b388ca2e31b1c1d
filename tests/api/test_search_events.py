"""search_events through GET /api/events: input mapping, envelopes and parity (rules: tests/events)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.visitors import Mode, Visitor
from events import actions
from events.models import Activity
from tests.api.conftest import assert_envelope
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def catalogue():
    soon = timezone.now() + timedelta(days=5)
    return {
        "intro": EventFactory(
            public_id="evt-webmcp-intro",
            title="WebMCP 入門工作坊",
            summary="從語意 HTML 到第一個網站 Tool。",
            starts_at=soon + timedelta(days=2),
        ),
        "agent": EventFactory(
            public_id="evt-agent-kh",
            title="AI Agent 實戰",
            location="kaohsiung",
            level="intermediate",
            paid=True,
            starts_at=soon + timedelta(days=1),
        ),
        "online": EventFactory(
            public_id="evt-online-a11y",
            title="無障礙設計線上講座",
            summary="Accessible agents",
            location="online",
            level="advanced",
            starts_at=soon,
        ),
        "past": EventFactory(public_id="evt-past", title="WebMCP 回顧", past=True),
        "draft": EventFactory(public_id="evt-draft", title="WebMCP 草稿", draft=True),
        "cancelled": EventFactory(public_id="evt-cancelled", title="WebMCP 取消場", cancelled=True),
    }


def ids(body):
    return [event["id"] for event in body["events"]]


def test_search_events_filters_are_exact_and_combined(api, catalogue):
    body = api.get("/api/events", {"location": "taipei", "price": "free", "level": "beginner"}).json()
    assert ids(body) == ["evt-webmcp-intro"]
    assert body["appliedFilters"] == {"location": "taipei", "price": "free", "level": "beginner"}
    assert body["events"][0] == {
        "id": "evt-webmcp-intro",
        "url": "/events/evt-webmcp-intro/",
        "title": "WebMCP 入門工作坊",
        "summary": "從語意 HTML 到第一個網站 Tool。",
        "startsAt": timezone.localtime(catalogue["intro"].starts_at).isoformat(),
        "location": "taipei",
        "price": "free",
        "level": "beginner",
    }
    assert body["events"][0]["startsAt"].endswith("+08:00")


def test_search_events_zero_results_is_a_success_that_never_relaxes(api, catalogue):
    params = {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"}
    response = api.get("/api/events", params)
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and body["count"] == 0 and body["total"] == 0 and body["events"] == []
    assert body["appliedFilters"] == params
    assert body["constraintsRelaxed"] is False
    assert body["requiresUserDecision"] is True
    assert "ask" in body["nextAction"].lower()


def test_search_events_page_window_caps_results_and_reports_total(api, catalogue):
    body = api.get("/api/events", {"limit": 2, "offset": 1}).json()
    assert ids(body) == ["evt-agent-kh", "evt-webmcp-intro"]
    assert body["count"] == 2 and body["total"] == 3
    assert "constraintsRelaxed" not in body


def test_search_events_null_like_blank_query_means_no_query(api, catalogue):
    assert api.get("/api/events", {"query": ""}).json()["total"] == 3


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"location": "mars"}, "location"),
        ({"price": "cheap"}, "price"),
        ({"level": "expert"}, "level"),
        ({"query": "a" * 101}, "query"),
        ({"limit": "0"}, "limit"),
        ({"limit": "x"}, "limit"),
        ({"offset": "-1"}, "offset"),
        ({"offset": "522874014870663231092817920"}, "offset"),  # beyond any database's OFFSET
    ],
)
def test_search_events_bad_values_get_validation_error_with_fields(api, catalogue, params, field):
    body = assert_envelope(api.get("/api/events", params), 400, "INVALID_INPUT", "VALIDATION_ERROR")
    assert field in body["fields"]


def test_search_events_accepts_a_query_of_exactly_100_characters(api, catalogue):
    assert api.get("/api/events", {"query": "a" * 100}).status_code == 200


@pytest.mark.parametrize("params", [{"cityCode": "1"}, {"autoRegister": "true"}, {"sortBy": "price"}])
def test_search_events_unknown_parameter_is_refused(api, catalogue, params):
    body = assert_envelope(api.get("/api/events", params), 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert set(body["fields"]) == set(params)


def test_search_events_repeated_parameter_is_refused(api, catalogue):
    assert_envelope(api.get("/api/events?location=taipei&location=online"), 400, "INVALID_INPUT")


def test_search_events_records_the_api_channel_and_the_declared_mode_as_a_claim(api, catalogue):
    api.get("/api/events")
    api.get("/api/events", HTTP_X_CLIENT_MODE="agent")
    api.get("/api/events", HTTP_X_CLIENT_MODE="nonsense")
    api.get("/api/events", HTTP_X_WEBMCP_TOOL="search_events")
    rows = Activity.objects.order_by("id").values_list("action", "mode", "outcome", "claimed_mode")
    assert list(rows) == [
        ("search_events", "api", "OK", ""),
        ("search_events", "api", "OK", "agent"),
        ("search_events", "api", "OK", ""),
        ("search_events", "agent", "OK", ""),  # a WebMCP tool's call of the route
    ]


def test_search_events_mode_never_changes_the_result(api, catalogue):
    as_api = api.get("/api/events", {"query": "WebMCP"}).json()
    as_agent = api.get("/api/events", {"query": "WebMCP"}, HTTP_X_CLIENT_MODE="agent").json()
    assert as_api == as_agent


PARITY_TABLE = [
    {},
    {"query": "WebMCP"},
    {"query": "agent"},
    {"location": "taipei"},
    {"location": "online", "level": "advanced"},
    {"price": "paid"},
    {"price": "free", "level": "beginner", "location": "taipei"},
    {"query": "無障礙", "location": "online"},
    {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"},
]


@pytest.mark.parametrize("params", PARITY_TABLE)
def test_search_events_api_returns_exactly_what_the_use_case_returns(api, catalogue, params):
    result = actions.call("search_events", visitor=Visitor(), channel=Mode.API, **params)
    body = api.get("/api/events", params).json()
    assert ids(body) == [event.public_id for event in result.events]
    assert body["total"] == result.total
    assert body["appliedFilters"] == result.applied_filters


def _statements(client, path: str, **headers) -> tuple[object, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, headers=headers)
    kept = [query["sql"] for query in captured.captured_queries if "events_activity" not in query["sql"]]
    return response, [sql for sql in kept if not sql.startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]


def test_a_search_reads_its_etags_revision_in_its_page_and_the_state_version_once(
    api, signed_in_api, catalogue
):
    response, anonymous = _statements(api, "/api/events?location=taipei")
    assert response.status_code == 200 and response["ETag"] and len(anonymous) == 1
    response, signed_in = _statements(signed_in_api, "/api/events?location=taipei")
    assert response.status_code == 200 and response.json()["stateVersion"] == 0
    assert len(signed_in) == 3  # the session with its person, the page, the stateVersion
    again, conditional = _statements(
        signed_in_api, "/api/events?location=taipei", **{"If-None-Match": response["ETag"]}
    )
    assert again.status_code == 304 and len(conditional) == 3  # the revision alone instead of the page


def test_an_empty_search_reads_its_revision_alone(api, catalogue):
    response, statements = _statements(api, "/api/events?location=online&level=beginner")
    assert response.status_code == 200 and response.json()["count"] == 0 and len(statements) == 2
    again = api.get("/api/events?location=online&level=beginner", headers={"If-None-Match": response["ETag"]})
    assert again.status_code == 304
