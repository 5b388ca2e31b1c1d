"""save_event / unsave_event / list_saved through /api/me/saved."""

import pytest

from events.models import Activity, SavedEvent
from tests.api.conftest import assert_envelope
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def event():
    return EventFactory(public_id="evt-save-me")


def test_save_event_saves_once_and_second_save_says_already_saved(signed_in_api, user, event):
    first = signed_in_api.write("PUT", "/api/me/saved/evt-save-me")
    assert first.status_code == 201
    assert first.json() | {} == {
        "ok": True,
        "eventId": "evt-save-me",
        "saved": True,
        "alreadySaved": False,
        "uiUpdated": False,
        "stateVersion": 1,
    }
    second = signed_in_api.write("PUT", "/api/me/saved/evt-save-me")
    assert second.status_code == 200
    assert second.json()["alreadySaved"] is True
    assert second.json()["stateVersion"] == 1  # a no-op never raises the version
    assert SavedEvent.objects.filter(user=user, event=event).count() == 1
    assert list(
        Activity.objects.filter(action="save_event").values_list("outcome", flat=True).order_by("id")
    ) == [
        "OK",
        "ALREADY_SAVED",
    ]


def test_save_event_works_for_an_anonymous_session_and_lists_it(api, event):
    assert api.write("PUT", "/api/me/saved/evt-save-me").status_code == 201
    saved = api.get("/api/me/saved").json()
    assert [item["id"] for item in saved["events"]] == ["evt-save-me"]
    assert saved["stateVersion"] == 1
    assert SavedEvent.objects.get().user is None


def test_save_event_for_a_cancelled_event_is_a_conflict(signed_in_api):
    EventFactory(public_id="evt-cancelled", cancelled=True)
    assert_envelope(
        signed_in_api.write("PUT", "/api/me/saved/evt-cancelled"), 409, "CONFLICT", "EVENT_CANCELLED"
    )
    assert not SavedEvent.objects.exists()


def test_save_event_refuses_unknown_body_keys(signed_in_api, event):
    response = signed_in_api.write("PUT", "/api/me/saved/evt-save-me", {"autoRegister": True})
    assert_envelope(response, 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert not SavedEvent.objects.exists()


@pytest.mark.parametrize("body", ["[1, 2]", '"text"', "{not json"])
def test_save_event_refuses_a_body_that_is_not_an_object(signed_in_api, event, body):
    response = signed_in_api.put(
        "/api/me/saved/evt-save-me",
        data=body,
        content_type="application/json",
        HTTP_X_CSRFTOKEN=signed_in_api.csrf_token,
    )
    assert_envelope(response, 400, "INVALID_INPUT")
    assert not SavedEvent.objects.exists()


def test_unsave_event_removes_and_second_unsave_changes_nothing(signed_in_api, user, event):
    signed_in_api.write("PUT", "/api/me/saved/evt-save-me")
    first = signed_in_api.write("DELETE", "/api/me/saved/evt-save-me").json()
    assert first["wasSaved"] is True and first["saved"] is False and first["stateVersion"] == 2
    second = signed_in_api.write("DELETE", "/api/me/saved/evt-save-me").json()
    assert second["wasSaved"] is False and second["stateVersion"] == 2
    assert not SavedEvent.objects.exists()


def test_unsave_event_of_an_unknown_event_returns_event_not_found(signed_in_api, event):
    response = signed_in_api.write("DELETE", "/api/me/saved/evt-nothing")
    body = assert_envelope(response, 404, "NOT_FOUND", "EVENT_NOT_FOUND")
    assert body["stateVersion"] == 0
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("unsave_event", "api", "EVENT_NOT_FOUND")
    ]


def test_list_saved_refuses_unknown_parameters(api):
    assert_envelope(api.get("/api/me/saved", {"page": "2"}), 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
