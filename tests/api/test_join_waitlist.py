"""join_waitlist / leave_waitlist / list_waitlist through the API, and claiming an offer by registering."""

from __future__ import annotations

from datetime import datetime

import pytest

from events.choices import WaitlistStatus
from events.models import Activity, WaitlistEntry
from tests.api.conftest import ApiClient, assert_envelope
from tests.factories import EventFactory, RegistrationFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

WAITLIST = "/api/events/evt-full/waitlist"
REGISTRATION = "/api/events/evt-full/registration"


@pytest.fixture
def event():
    event = EventFactory(public_id="evt-full", capacity=1)
    RegistrationFactory(event=event, user=UserFactory(username="holder"))
    return event


def client_for(username: str) -> ApiClient:
    client = ApiClient()
    client.force_login(UserFactory(username=username))
    return client


def test_join_then_join_again(signed_in_api, user, event):
    first = signed_in_api.write("POST", WAITLIST)
    assert first.status_code == 201
    body = first.json()
    assert {k: body[k] for k in ("ok", "eventId", "waiting", "position", "offer", "alreadyWaiting")} == {
        "ok": True,
        "eventId": "evt-full",
        "waiting": True,
        "position": 1,
        "offer": None,
        "alreadyWaiting": False,
    }
    assert "waiting list" in body["nextAction"] and body["stateVersion"] == 1
    again = signed_in_api.write("POST", WAITLIST)
    assert again.status_code == 200
    assert (again.json()["alreadyWaiting"], again.json()["position"], again.json()["stateVersion"]) == (
        True,
        1,
        1,
    )
    assert WaitlistEntry.objects.filter(user=user).count() == 1


def test_a_free_seat_is_a_409_that_says_register(signed_in_api):
    EventFactory(public_id="evt-full", capacity=5)
    body = assert_envelope(signed_in_api.write("POST", WAITLIST), 409, "CONFLICT", "SEATS_AVAILABLE")
    assert "register_event" in body["nextAction"]


def test_anonymous_visitors_must_sign_in(api, event):
    assert_envelope(api.write("POST", WAITLIST), 401, "AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert_envelope(api.get("/api/me/waitlist"), 401, "AUTH_REQUIRED")


def test_an_unknown_event_is_404_and_an_unknown_parameter_400(signed_in_api, event):
    assert_envelope(signed_in_api.write("POST", "/api/events/evt-nope/waitlist"), 404, "NOT_FOUND")
    response = signed_in_api.write("POST", WAITLIST, data={"position": 1})
    assert_envelope(response, 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert not WaitlistEntry.objects.exists()


def test_an_offer_is_shown_held_from_others_and_claimed_by_registering(event):
    first, second, stranger = client_for("first"), client_for("second"), client_for("stranger")
    first.write("POST", WAITLIST)
    second.write("POST", WAITLIST)
    holder = client_for("holder")
    assert holder.write("DELETE", REGISTRATION).status_code == 200  # a seat frees

    mine = first.get("/api/me/waitlist").json()
    [entry] = mine["entries"]
    assert (mine["count"], entry["eventId"], entry["position"]) == (1, "evt-full", 1)
    expires = datetime.fromisoformat(entry["offer"]["expiresAt"])
    assert expires == WaitlistEntry.objects.get(user__username="first").expires_at
    assert second.get("/api/me/waitlist").json()["entries"][0] | {"joinedAt": None} == {
        "eventId": "evt-full",
        "position": 2,
        "offer": None,
        "joinedAt": None,
    }
    details = first.get("/api/events/evt-full").json()
    assert details["waitlist"]["offer"]["expiresAt"] == entry["offer"]["expiresAt"]
    assert (details["event"]["seatsLeft"], details["event"]["isFull"]) == (0, True)

    # Nobody else can take the held seat, not even the next person waiting.
    assert_envelope(stranger.write("POST", REGISTRATION), 409, "CONFLICT", "EVENT_FULL")
    assert_envelope(second.write("POST", REGISTRATION), 409, "CONFLICT", "EVENT_FULL")
    claimed = first.write("POST", REGISTRATION)
    assert claimed.status_code == 201 and claimed.json()["registration"]["status"] == "confirmed"
    assert first.get("/api/me/waitlist").json() == {"ok": True, "count": 0, "entries": [], "stateVersion": 3}
    assert second.get("/api/me/waitlist").json()["entries"][0]["position"] == 1


def test_leaving_with_an_offer_declines_it_and_the_next_person_gets_it(event):
    first, second = client_for("first"), client_for("second")
    first.write("POST", WAITLIST)
    second.write("POST", WAITLIST)
    client_for("holder").write("DELETE", REGISTRATION)
    response = first.write("DELETE", WAITLIST)
    assert response.status_code == 200
    body = response.json()
    assert (body["waiting"], body["wasWaiting"], body["declinedOffer"]) == (False, True, True)
    assert WaitlistEntry.objects.get(user__username="second").status == WaitlistStatus.OFFERED
    again = first.write("DELETE", WAITLIST).json()
    assert (again["wasWaiting"], again["declinedOffer"]) == (False, False)


def test_the_waitlist_of_a_registered_person_is_refused(event):
    holder = client_for("holder")
    assert_envelope(holder.write("POST", WAITLIST), 409, "CONFLICT", "ALREADY_REGISTERED")


def test_leave_waitlist_of_an_unknown_event_returns_event_not_found(signed_in_api, event):
    signed_in_api.write("POST", WAITLIST)
    response = signed_in_api.write("DELETE", "/api/events/evt-nope/waitlist")
    assert_envelope(response, 404, "NOT_FOUND", "EVENT_NOT_FOUND")
    assert WaitlistEntry.objects.get().status == WaitlistStatus.WAITING  # the other list is untouched
    assert Activity.objects.filter(action="leave_waitlist").get().outcome == "EVENT_NOT_FOUND"
