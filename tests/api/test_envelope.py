"""One exception handler: CSRF, throttling, unknown routes and unexpected errors all get the envelope."""

import pytest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import IntegrityError, InterfaceError, OperationalError
from django.http import Http404
from django.test import Client
from rest_framework import exceptions as drf

from core import errors
from core import exceptions as api_exceptions
from core.envelope import current_state_version, error_envelope
from core.visitors import Visitor
from events import selectors
from events.errors import EventFull
from events.models import Activity, Registration, SavedEvent
from events.services.common import bump_state_version
from tests.api.conftest import ApiClient, assert_envelope
from tests.api.urls_failing import RaisingApi
from tests.factories import EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


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
    assert body["stateVersion"] == 0  # an anonymous visitor without changes; the database works


def _signed_in_at_version(user, version: int) -> Client:
    for _ in range(version):
        bump_state_version(visitor=Visitor(user=user))
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.mark.urls("tests.api.urls_failing")
@pytest.mark.parametrize("path", ["/api/broken", "/api/broken-plain"])
def test_a_500_envelope_carries_the_visitors_state_version(user, path):
    """Through DRF's handler (/api/broken) and Django's handler500 (/api/broken-plain) alike."""
    response = _signed_in_at_version(user, 2).get(path)
    body = assert_envelope(response, 500, "INTERNAL_ERROR", "UNEXPECTED")
    assert body["stateVersion"] == 2
    assert "boom" not in response.content.decode()


@pytest.mark.urls("tests.api.urls_failing")
@pytest.mark.parametrize("path", ["/api/broken", "/api/broken-plain"])
@pytest.mark.parametrize("failure", [OperationalError("down"), RuntimeError("broken read")])
def test_a_500_envelope_says_null_when_the_version_cannot_be_read(user, monkeypatch, path, failure):
    client = _signed_in_at_version(user, 1)

    def fail(**kwargs):
        raise failure

    monkeypatch.setattr(selectors, "state_version", fail)
    body = assert_envelope(client.get(path), 500, "INTERNAL_ERROR", "UNEXPECTED")
    assert body["stateVersion"] is None


@pytest.mark.urls("tests.api.urls_failing")
@pytest.mark.parametrize(
    ("path", "failure"),
    [
        ("/api/raising", OperationalError("connection refused")),  # DRF view: the one exception handler
        ("/api/raising", InterfaceError("connection already closed")),
        ("/api/database-down-plain", None),  # Django view: DatabaseUnavailableMiddleware
    ],
)
def test_a_503_database_unavailable_envelope_has_a_null_state_version(user, monkeypatch, path, failure):
    client = _signed_in_at_version(user, 3)
    if failure is not None:
        monkeypatch.setattr(RaisingApi, "exception", failure)
    reads = []
    monkeypatch.setattr(selectors, "state_version", lambda **kwargs: reads.append(kwargs) or 3)
    response = client.get(path)
    body = assert_envelope(response, 503, "TEMPORARY_FAILURE", "EVENT_SERVICE_UNAVAILABLE")
    assert body["stateVersion"] is None
    assert reads == []  # the database is not asked a second time while it is down


def test_health_envelope_has_a_null_state_version_when_the_database_is_down(client, monkeypatch):
    from config import health

    monkeypatch.setattr(health, "database_ok", lambda: False)
    body = assert_envelope(client.get("/health"), 503, "TEMPORARY_FAILURE", "EVENT_SERVICE_UNAVAILABLE")
    assert body["stateVersion"] is None and body["database"] == "unreachable"


def _domain_errors() -> list[type[errors.DomainError]]:
    found, todo = [], [errors.DomainError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    assert api_exceptions.InternalError in found and EventFull in found  # the site's and the domain's
    ours = (cls for cls in found if cls.__module__.startswith(("events.", "core.")))
    return sorted(ours, key=lambda c: c.__name__)


def _instance(cls: type[errors.DomainError]) -> errors.DomainError:
    return cls(extra={"retryAfter": 7}) if issubclass(cls, errors.RateLimited) else cls()


@pytest.mark.urls("tests.api.urls_failing")
@pytest.mark.parametrize("error_class", _domain_errors(), ids=lambda cls: cls.__name__)
def test_every_domain_error_answers_an_envelope_with_the_state_version(user, monkeypatch, error_class):
    error = _instance(error_class)
    monkeypatch.setattr(RaisingApi, "exception", error)
    response = _signed_in_at_version(user, 2).get("/api/raising")
    body = assert_envelope(response, error.http_status, error.code, error.reason)
    assert body["stateVersion"] == 2


@pytest.mark.urls("tests.api.urls_failing")
@pytest.mark.parametrize(
    ("exception", "status", "code", "version"),
    [
        (drf.ValidationError({"query": ["bad"]}), 400, "INVALID_INPUT", 2),
        (drf.ParseError(), 400, "INVALID_INPUT", 2),
        (drf.NotAuthenticated(), 401, "AUTH_REQUIRED", 2),
        (drf.AuthenticationFailed(), 401, "AUTH_REQUIRED", 2),
        (api_exceptions.CsrfFailedError(), 403, "PERMISSION_DENIED", 2),
        (drf.PermissionDenied(), 403, "PERMISSION_DENIED", 2),
        (DjangoPermissionDenied(), 403, "PERMISSION_DENIED", 2),
        (Http404(), 404, "NOT_FOUND", 2),
        (drf.NotFound(), 404, "NOT_FOUND", 2),
        (drf.MethodNotAllowed("GET"), 405, "INVALID_INPUT", 2),
        (drf.NotAcceptable(), 406, "INVALID_INPUT", 2),
        (drf.UnsupportedMediaType("text/plain"), 415, "INVALID_INPUT", 2),
        (drf.Throttled(wait=3), 429, "TEMPORARY_FAILURE", 2),
        (IntegrityError("not a connection failure"), 503, "TEMPORARY_FAILURE", 2),
        (OperationalError("connection refused"), 503, "TEMPORARY_FAILURE", None),
        (InterfaceError("connection already closed"), 503, "TEMPORARY_FAILURE", None),
        (RuntimeError("boom"), 500, "INTERNAL_ERROR", 2),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else None,
)
def test_every_translated_exception_answers_an_envelope_with_the_state_version(
    user, monkeypatch, exception, status, code, version
):
    monkeypatch.setattr(RaisingApi, "exception", exception)
    body = assert_envelope(_signed_in_at_version(user, 2).get("/api/raising"), status, code)
    assert body["stateVersion"] == version


@pytest.mark.urls("tests.api.urls_failing")
def test_unknown_api_route_envelope_carries_the_state_version(user):
    body = assert_envelope(_signed_in_at_version(user, 1).get("/api/nowhere"), 404, "NOT_FOUND")
    assert body["stateVersion"] == 1


def test_error_envelope_always_has_the_key_and_keeps_its_signature():
    assert error_envelope(EventFull())["stateVersion"] is None
    assert error_envelope(EventFull(), state_version=None)["stateVersion"] is None
    assert error_envelope(EventFull(), state_version=4)["stateVersion"] == 4
    body = error_envelope(errors.InvalidInput(extra={"fields": {"a": ["b"]}}), state_version=5)
    assert body["fields"] == {"a": ["b"]} and body["stateVersion"] == 5


def test_current_state_version_reads_safely(user, rf, monkeypatch):
    request = rf.get("/api/events")
    request.user = user
    bump_state_version(visitor=Visitor(user=user))
    assert current_state_version(request) == 1
    assert current_state_version(None) is None

    def fail(**kwargs):
        raise OperationalError("down")

    monkeypatch.setattr(selectors, "state_version", fail)
    assert current_state_version(request) is None


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
