"""One exception handler: CSRF, throttling, unknown routes and unexpected errors all get the envelope."""

import pytest
from django.test import Client

from events.models import Activity, Registration, SavedEvent
from tests.api.conftest import ApiClient, assert_envelope
from tests.factories import EventFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def event():
    return EventFactory(public_id="evt-env", capacity=5)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/api/me/saved/evt-env"),
        ("DELETE", "/api/me/saved/evt-env"),
        ("POST", "/api/events/evt-env/registration"),
        ("DELETE", "/api/events/evt-env/registration"),
    ],
)
def test_write_without_csrf_token_is_refused_and_writes_nothing(user, event, method, path):
    anonymous, signed_in = Client(enforce_csrf_checks=True), Client(enforce_csrf_checks=True)
    signed_in.force_login(user)
    for client in (anonymous, signed_in):
        response = getattr(client, method.lower())(path, content_type="application/json")
        assert_envelope(response, 403, "PERMISSION_DENIED", "CSRF_FAILED")
    assert not SavedEvent.objects.exists()
    assert not Registration.objects.exists()


def test_write_with_a_wrong_csrf_token_is_refused(api, event):
    response = api.put("/api/me/saved/evt-env", content_type="application/json", HTTP_X_CSRFTOKEN="x" * 32)
    assert_envelope(response, 403, "PERMISSION_DENIED", "CSRF_FAILED")
    assert not SavedEvent.objects.exists()


def test_writes_beyond_the_rate_limit_get_rate_limited_with_retry_after(settings, signed_in_api, event):
    settings.WRITE_THROTTLE_RATES = {"writes": "2/min"}
    assert signed_in_api.write("PUT", "/api/me/saved/evt-env").status_code == 201
    assert signed_in_api.write("DELETE", "/api/me/saved/evt-env").status_code == 200
    response = signed_in_api.write("PUT", "/api/me/saved/evt-env")
    body = assert_envelope(response, 429, "TEMPORARY_FAILURE", "RATE_LIMITED")
    assert 0 < body["retryAfter"] <= 60
    assert response["Retry-After"] == str(body["retryAfter"])
    assert not SavedEvent.objects.exists()
    assert signed_in_api.get("/api/events").status_code == 200  # reads are not throttled


def test_unknown_api_route_is_a_json_not_found(api):
    assert_envelope(api.get("/api/nowhere"), 404, "NOT_FOUND")


def test_method_not_allowed_is_an_envelope(api, event):
    response = api.write("PATCH", "/api/me/saved/evt-env")
    assert_envelope(response, 405, "INVALID_INPUT", "METHOD_NOT_ALLOWED")


def test_wrong_content_type_is_an_envelope(api, event):
    response = api.put(
        "/api/me/saved/evt-env",
        data="a=b",
        content_type="application/x-www-form-urlencoded",
        HTTP_X_CSRFTOKEN=api.csrf_token,
    )
    assert_envelope(response, 415, "INVALID_INPUT", "UNSUPPORTED_MEDIA_TYPE")


@pytest.mark.urls("tests.api.urls_failing")
def test_unexpected_error_is_a_500_envelope_without_internals(db):
    response = Client(raise_request_exception=False).get("/api/broken")
    body = assert_envelope(response, 500, "INTERNAL_ERROR")
    assert "boom" not in response.content.decode()
    assert body["retryable"] is False


def test_refusals_are_recorded_as_activity_with_their_reason(signed_in_api):
    signed_in_api.write("POST", "/api/events/evt-missing/registration")
    activity = Activity.objects.get(action="register_event")
    assert (activity.mode, activity.outcome) == ("api", "EVENT_NOT_FOUND")


def test_api_answers_json_even_when_the_client_asks_for_html(event):
    response = ApiClient().get("/api/events/evt-missing", HTTP_ACCEPT="text/html")
    assert response["Content-Type"].startswith("application/json")
    assert response.status_code in (404, 406)


def test_activity_names_the_event_for_successes_and_refusals(signed_in_api, event):
    EventFactory(public_id="evt-env-full", capacity=1)
    signed_in_api.write("PUT", "/api/me/saved/evt-env")
    signed_in_api.write("POST", "/api/events/evt-env-full/registration")
    signed_in_api.write("POST", "/api/events/evt-env-full/registration")
    other = ApiClient()
    other.force_login(UserFactory(username="late"))
    other.write("POST", "/api/events/evt-env-full/registration")
    rows = Activity.objects.order_by("id").values_list("action", "outcome", "event__public_id")
    assert list(rows) == [
        ("save_event", "OK", "evt-env"),
        ("register_event", "OK", "evt-env-full"),
        ("register_event", "ALREADY_REGISTERED", "evt-env-full"),
        ("register_event", "EVENT_FULL", "evt-env-full"),
    ]
