"""get_event_details through GET /api/events/<id>."""

import pytest

from tests.api.conftest import assert_envelope
from tests.factories import EventFactory, RegistrationFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_get_event_details_returns_everything_public(api):
    event = EventFactory(public_id="evt-paid", paid=True, capacity=3, venue="Room 101")
    RegistrationFactory(event=event)
    body = api.get("/api/events/evt-paid").json()
    assert body["ok"] is True and body["saved"] is False and body["registered"] is False
    details = body["event"]
    assert details["id"] == "evt-paid" and details["venue"] == "Room 101"
    assert details["priceAmount"] == 500 and details["currency"] == "TWD"
    assert details["capacity"] == 3 and details["seatsLeft"] == 2
    assert details["isFull"] is False and details["registrationOpen"] is True
    assert details["endsAt"].endswith("+08:00")


def test_get_event_details_leaves_absent_optional_fields_out(api):
    EventFactory(public_id="evt-free")
    details = api.get("/api/events/evt-free").json()["event"]
    assert not {"priceAmount", "currency", "capacity", "seatsLeft"} & set(details)


def test_get_event_details_shows_cancelled_events_as_cancelled(api):
    EventFactory(public_id="evt-gone", cancelled=True)
    details = api.get("/api/events/evt-gone").json()["event"]
    assert details["status"] == "cancelled" and details["registrationOpen"] is False


@pytest.mark.parametrize("event_id", ["evt-missing", "evt-draft"])
def test_get_event_details_unknown_or_draft_is_not_found(api, event_id):
    EventFactory(public_id="evt-draft", draft=True)
    assert_envelope(api.get(f"/api/events/{event_id}"), 404, "NOT_FOUND", "EVENT_NOT_FOUND")


@pytest.mark.parametrize("event_id", ["EVT-UPPER", "webmcp-intro", "evt-" + "a" * 80])
def test_get_event_details_malformed_id_is_invalid_input(api, event_id):
    body = assert_envelope(api.get(f"/api/events/{event_id}"), 400, "INVALID_INPUT", "VALIDATION_ERROR")
    assert "event_id" in body["fields"]


def test_get_event_details_refuses_unknown_query_parameters(api):
    EventFactory(public_id="evt-free")
    assert_envelope(
        api.get("/api/events/evt-free", {"expand": "all"}), 400, "INVALID_INPUT", "UNKNOWN_PARAMETER"
    )


def test_get_event_details_reports_the_visitors_registration(signed_in_api, user):
    event = EventFactory(public_id="evt-mine")
    RegistrationFactory(event=event, user=user)
    assert signed_in_api.get("/api/events/evt-mine").json()["registered"] is True
