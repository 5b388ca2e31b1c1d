"""A call refused before its use case ran is still one Activity row, named after the use case.

Bad input, no sign-in and a token without the scope are the caller's refusals and are recorded (the
dashboard's "refusals agents met"); what cannot be put on the caller is not: a bad token, a write
without its CSRF token, a body that cannot be read (the CSRF check reads it before the caller is
known), the write rate. The pages' and MCP's tool calls are checked in
tests/pages/test_tool_calls.py and tests/mcp/test_mcp_tools.py.
"""

import pytest

from accounts.tokens import create_access_token
from events.models import Activity
from tests.api.conftest import ApiClient, assert_envelope
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def rows() -> list[tuple[str, str, str, str | None]]:
    return list(Activity.objects.order_by("id").values_list("action", "mode", "outcome", "event__public_id"))


@pytest.fixture
def event():
    return EventFactory(public_id="evt-early", capacity=5)


def test_bad_input_is_a_row_of_the_use_case_with_its_reason_and_mode(api, event):
    assert_envelope(api.get("/api/events?level=guru"), 400, "INVALID_INPUT", "VALIDATION_ERROR")
    assert_envelope(api.get("/api/events?colour=blue"), 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    tool = {"HTTP_X_WEBMCP_TOOL": "get_event_details"}
    assert_envelope(api.get("/api/events/evt-early?x=1", **tool), 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert rows() == [
        ("search_events", "api", "VALIDATION_ERROR", None),
        ("search_events", "api", "UNKNOWN_PARAMETER", None),
        ("get_event_details", "agent", "UNKNOWN_PARAMETER", "evt-early"),
    ]


def test_a_write_refused_for_its_body_or_id_names_the_event_only_when_the_id_is_well_formed(
    signed_in_api, user, event
):
    response = signed_in_api.write("PUT", "/api/me/saved/evt-early", {"note": "x"})
    assert_envelope(response, 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert_envelope(signed_in_api.write("PUT", "/api/me/saved/EVT%201"), 400, "INVALID_INPUT")
    assert rows() == [
        ("save_event", "api", "UNKNOWN_PARAMETER", "evt-early"),
        ("save_event", "api", "VALIDATION_ERROR", None),
    ]
    assert list(Activity.objects.values_list("user", flat=True)) == [user.pk] * 2


def test_a_refusal_inside_the_use_case_is_one_row_not_two(signed_in_api):
    assert_envelope(signed_in_api.write("PUT", "/api/me/saved/evt-nowhere"), 404, "NOT_FOUND")
    assert rows() == [("save_event", "api", "EVENT_NOT_FOUND", None)]


def test_a_token_without_the_scope_is_a_row_for_its_person(api, user, event):
    _, raw = create_access_token(user=user, name="read only", scopes=["events:read"], days=1)
    response = api.post("/api/events/evt-early/registration", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert_envelope(response, 403, "PERMISSION_DENIED", "INSUFFICIENT_SCOPE")
    assert list(Activity.objects.values_list("action", "outcome", "user")) == [
        ("register_event", "INSUFFICIENT_SCOPE", user.pk)
    ]


def test_what_cannot_be_put_on_the_caller_is_no_row(settings, api, signed_in_api, event):
    # The session's CSRF check reads the body: one that cannot be read fails before the caller is known.
    malformed = signed_in_api.write("POST", "/api/events/evt-early/registration", "{")
    assert_envelope(malformed, 400, "INVALID_INPUT", "MALFORMED_REQUEST")
    bad_token = api.get("/api/events?level=guru", HTTP_AUTHORIZATION="Bearer are_unknown")
    assert_envelope(bad_token, 401, "AUTH_REQUIRED", "INVALID_TOKEN")
    forged = ApiClient()
    forged.cookies.clear()  # no CSRF cookie: a cross-site form post looks like this
    assert_envelope(forged.put("/api/me/saved/evt-early"), 403, "PERMISSION_DENIED", "CSRF_FAILED")
    settings.WRITE_THROTTLE_RATES = {"writes": "1/min"}
    assert signed_in_api.write("PUT", "/api/me/saved/evt-early").status_code == 201
    throttled = signed_in_api.write("PUT", "/api/me/saved/evt-early")
    assert_envelope(throttled, 429, "TEMPORARY_FAILURE", "RATE_LIMITED")
    assert rows() == [("save_event", "api", "OK", "evt-early")]


def test_a_method_the_endpoint_lacks_names_no_use_case_and_is_no_row(api, event):
    assert_envelope(api.write("DELETE", "/api/events"), 405, "INVALID_INPUT", "METHOD_NOT_ALLOWED")
    assert rows() == []
