"""register_event / cancel_registration / list_registrations through the API."""

import pytest

from events.choices import RegistrationStatus
from events.models import Registration
from tests.api.conftest import ApiClient, assert_envelope
from tests.factories import EventFactory, RegistrationFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/api/events/evt-reg/registration"


@pytest.fixture
def event():
    return EventFactory(public_id="evt-reg", capacity=2)


def test_register_event_creates_then_second_call_says_already_registered(signed_in_api, user, event):
    first = signed_in_api.write("POST", URL)
    assert first.status_code == 201
    body = first.json()
    assert body["registration"]["status"] == "confirmed" and body["alreadyRegistered"] is False
    assert body["stateVersion"] == 1
    second = signed_in_api.write("POST", URL)
    assert second.status_code == 200
    assert second.json()["alreadyRegistered"] is True and second.json()["stateVersion"] == 1
    assert Registration.objects.filter(user=user, event=event).count() == 1


def test_register_event_anonymous_gets_auth_required_json_not_a_redirect(api, event):
    body = assert_envelope(api.write("POST", URL), 401, "AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert "/accounts/login/" in body["nextAction"]
    assert not Registration.objects.exists()


def test_register_event_when_full_returns_event_full(signed_in_api, event):
    RegistrationFactory.create_batch(2, event=event)
    assert_envelope(signed_in_api.write("POST", URL), 409, "CONFLICT", "EVENT_FULL")
    assert Registration.objects.filter(event=event).count() == 2


def test_register_event_after_cancel_reactivates_the_same_registration(signed_in_api, user, event):
    created = signed_in_api.write("POST", URL).json()
    signed_in_api.write("DELETE", URL)
    again = signed_in_api.write("POST", URL)
    assert again.status_code == 200
    assert again.json()["alreadyRegistered"] is False and again.json()["stateVersion"] == 3
    registration = Registration.objects.get(user=user, event=event)
    assert registration.status == RegistrationStatus.CONFIRMED
    assert created["registration"]["eventId"] == "evt-reg"


def test_cancel_registration_cancels_then_says_already_cancelled(signed_in_api, user, event):
    signed_in_api.write("POST", URL)
    first = signed_in_api.write("DELETE", URL).json()
    assert first["registration"]["status"] == "cancelled" and first["alreadyCancelled"] is False
    assert first["stateVersion"] == 2
    second = signed_in_api.write("DELETE", URL).json()
    assert second["alreadyCancelled"] is True and second["stateVersion"] == 2


def test_cancel_registration_of_someone_else_is_not_found(signed_in_api, event):
    RegistrationFactory(event=event, user=UserFactory(username="someone-else"))
    assert_envelope(signed_in_api.write("DELETE", URL), 404, "NOT_FOUND", "REGISTRATION_NOT_FOUND")
    assert Registration.objects.get().status == RegistrationStatus.CONFIRMED


def test_cancel_registration_anonymous_gets_auth_required(api, event):
    assert_envelope(api.write("DELETE", URL), 401, "AUTH_REQUIRED")


def test_list_registrations_lists_only_mine_newest_first(signed_in_api, user, event):
    other = EventFactory(public_id="evt-other")
    RegistrationFactory(event=other, user=UserFactory(username="stranger"))
    signed_in_api.write("POST", URL)
    body = signed_in_api.get("/api/me/registrations").json()
    assert body["count"] == 1
    assert body["registrations"][0]["eventId"] == "evt-reg"
    assert body["registrations"][0]["event"]["title"] == event.title


def test_list_registrations_anonymous_gets_auth_required(api):
    assert_envelope(api.get("/api/me/registrations"), 401, "AUTH_REQUIRED")


def test_state_version_is_per_visitor(event):
    alice, bob = UserFactory(username="a1"), UserFactory(username="b1")
    clients = []
    for person in (alice, bob):
        client = ApiClient()
        client.force_login(person)
        clients.append(client)
    clients[0].write("POST", URL)
    clients[0].write("PUT", "/api/me/saved/evt-reg")
    assert clients[0].get("/api/me/saved").json()["stateVersion"] == 2
    assert clients[1].get("/api/me/saved").json()["stateVersion"] == 0
