"""The waiting list on the pages: join from a full event, the place and the held seat on the event page
and on My events, leave or decline; the same routes answer the join_waitlist / leave_waitlist tools."""

from __future__ import annotations

import json
import re

import pytest
from django.core.cache import cache
from django.test import Client

from core.visitors import Visitor
from events import actions
from events.choices import WaitlistStatus
from events.models import Activity, WaitlistEntry
from tests.factories import EventFactory, RegistrationFactory, UserFactory

from .conftest import EN, HTMX, manifest_tools

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ISLAND = re.compile(r'<script id="webmcp-result" type="application/json">(.*?)</script>', re.S)


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


@pytest.fixture
def full_event(other_user):
    event = EventFactory(public_id="evt-full", title="Full workshop", capacity=1)
    RegistrationFactory(event=event, user=other_user)
    return event


def page(client: Client, path: str = "/events/evt-full/") -> str:
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def free_the_seat(other_user, event) -> None:
    actions.call(
        "cancel_registration", visitor=Visitor(user=other_user), channel="ui", event_id=event.public_id
    )


def test_a_full_event_offers_the_waiting_list_instead_of_registering(signed_in_en_client, full_event):
    html = page(signed_in_en_client)
    assert 'id="join-waitlist"' in html and "Join the waiting list" in html
    assert "held for the first person waiting for 24 hours" in html
    assert 'id="register-form"' not in html
    tools = manifest_tools(html)
    assert "join_waitlist" in tools and "register_event" not in tools and "leave_waitlist" not in tools


def test_anonymous_visitors_are_asked_to_sign_in_for_the_waiting_list(en_client, full_event):
    html = page(en_client)
    assert 'href="/accounts/login/?next=/events/evt-full/">Sign in to join the waiting list<' in html
    assert "join_waitlist" in manifest_tools(html)  # so an agent learns it must ask the person to sign in


def test_an_event_with_seats_has_no_waiting_list(signed_in_en_client):
    EventFactory(public_id="evt-open", capacity=5)
    html = page(signed_in_en_client, "/events/evt-open/")
    assert "join-waitlist" not in html and "join_waitlist" not in manifest_tools(html)


def test_joining_by_form_then_the_page_shows_the_place(signed_in_en_client, user, full_event):
    response = signed_in_en_client.post("/events/evt-full/waitlist/join/", follow=True)
    html = response.content.decode()
    assert "You are on the waiting list. We will e-mail you if a seat frees up." in html
    assert "You are number 1 on the waiting list." in html
    assert 'id="leave-waitlist"' in html and "join-waitlist" not in html
    assert set(manifest_tools(html)) >= {"leave_waitlist"} and "join_waitlist" not in manifest_tools(html)
    assert WaitlistEntry.objects.get(user=user).status == WaitlistStatus.WAITING


def test_joining_with_htmx_answers_the_region(signed_in_en_client, full_event):
    response = signed_in_en_client.post("/events/evt-full/waitlist/join/", headers=HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<main id="main"')
    assert "You are number 1 on the waiting list." in html


def test_the_held_seat_with_its_deadline_and_both_choices(signed_in_en_client, user, other_user, full_event):
    signed_in_en_client.post("/events/evt-full/waitlist/join/")
    free_the_seat(other_user, full_event)
    html = page(signed_in_en_client)
    assert "A seat has freed up and is held for you until" in html
    assert "Take the seat" in html and "Decline the seat" in html
    assert 'data-webmcp-confirm="register_event"' in html
    tools = manifest_tools(html)
    assert "register_event" in tools and "leave_waitlist" in tools
    signed_in_en_client.post("/events/evt-full/register/")
    html = page(signed_in_en_client)
    assert "You are registered for this event." in html
    assert WaitlistEntry.objects.get(user=user).status == WaitlistStatus.CLAIMED


def test_someone_else_sees_the_held_seat_as_full(en_client, signed_in_en_client, other_user, full_event):
    signed_in_en_client.post("/events/evt-full/waitlist/join/")
    free_the_seat(other_user, full_event)
    stranger = Client(headers=EN)
    stranger.force_login(UserFactory(username="stranger"))
    html = page(stranger)
    assert "This event is full: there are no seats left." in html
    assert 'id="register-form"' not in html


def test_my_events_lists_places_and_offers_with_leave_buttons(
    signed_in_en_client, user, other_user, full_event
):
    second = EventFactory(public_id="evt-second", title="Second workshop", capacity=1)
    RegistrationFactory(event=second)
    signed_in_en_client.post("/events/evt-full/waitlist/join/")
    actions.call("join_waitlist", visitor=Visitor(user=UserFactory()), channel="ui", event_id="evt-second")
    signed_in_en_client.post("/events/evt-second/waitlist/join/")
    free_the_seat(other_user, full_event)
    html = page(signed_in_en_client, "/me/")
    assert "Waiting lists" in html
    offer = html.index('id="waitlist-evt-full"')
    waiting = html.index('id="waitlist-evt-second"')
    assert offer < waiting  # offers first
    assert "A seat is held for you" in html[offer:waiting]
    assert "Number 2 on the waiting list" in html[waiting:]
    response = signed_in_en_client.post("/events/evt-second/waitlist/leave/", {"next": "/me/"}, follow=True)
    assert "You have left the waiting list." in response.content.decode()
    assert response.redirect_chain[-1][0] == "/me/"
    assert 'id="waitlist-evt-second"' not in response.content.decode()


def test_declining_on_the_page_passes_the_seat_on(signed_in_en_client, user, other_user, full_event):
    next_person = Visitor(user=UserFactory(username="next"))
    signed_in_en_client.post("/events/evt-full/waitlist/join/")
    actions.call("join_waitlist", visitor=next_person, channel="ui", event_id="evt-full")
    free_the_seat(other_user, full_event)
    signed_in_en_client.post("/events/evt-full/waitlist/leave/", headers=HTMX)
    assert WaitlistEntry.objects.get(user=user).status == WaitlistStatus.DECLINED
    assert WaitlistEntry.objects.get(user=next_person.user).status == WaitlistStatus.OFFERED


def test_a_refusal_is_a_message_not_an_error(signed_in_en_client):
    EventFactory(public_id="evt-open", capacity=5)
    response = signed_in_en_client.post("/events/evt-open/waitlist/join/", follow=True)
    assert "This event still has free seats: register directly." in response.content.decode()
    assert not WaitlistEntry.objects.exists()


def test_leaving_the_waiting_list_signed_out_sends_to_sign_in_with_a_message(en_client, full_event):
    response = en_client.post("/events/evt-full/waitlist/leave/", follow=True)
    assert response.redirect_chain == [("/accounts/login/?next=/events/evt-full/", 302)]
    assert "Please sign in first; then you can do this." in response.content.decode()
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("leave_waitlist", "ui", "SIGN_IN_REQUIRED")
    ]


# ── the tools, on the same routes ─────────────────────────────────────────────────────────────


def tool_call(client: Client, tool: str, action: str):
    return client.post(
        f"/events/evt-full/waitlist/{action}/",
        data="",
        content_type="application/json",
        headers={
            "X-WebMCP-Tool": tool,
            "X-Client-Mode": "agent",
            "X-WebMCP-Page": "http://testserver/events/evt-full/",
            "Accept": "text/html, application/json",
        },
    )


def test_join_waitlist_tool_answers_the_region_and_the_apis_body(signed_in_en_client, user, full_event):
    response = tool_call(signed_in_en_client, "join_waitlist", "join")
    [text] = ISLAND.findall(response.content.decode())
    result = json.loads(text)
    assert (result["ok"], result["position"], result["offer"], result["alreadyWaiting"]) == (
        True,
        1,
        None,
        False,
    )
    assert "You are number 1 on the waiting list." in response.content.decode()
    again = tool_call(signed_in_en_client, "join_waitlist", "join")
    assert json.loads(ISLAND.findall(again.content.decode())[0])["alreadyWaiting"] is True


def test_join_waitlist_tool_refusal_is_the_envelope(en_client, full_event):
    response = tool_call(en_client, "join_waitlist", "join")
    assert response.status_code == 401
    body = response.json()
    assert (body["code"], body["reason"]) == ("AUTH_REQUIRED", "SIGN_IN_REQUIRED")


def test_leave_waitlist_tool_declines_an_offer(signed_in_en_client, user, other_user, full_event):
    tool_call(signed_in_en_client, "join_waitlist", "join")
    free_the_seat(other_user, full_event)
    response = tool_call(signed_in_en_client, "leave_waitlist", "leave")
    result = json.loads(ISLAND.findall(response.content.decode())[0])
    assert (result["wasWaiting"], result["declinedOffer"], result["waiting"]) == (True, True, False)


def test_leave_waitlist_tool_signed_out_is_the_sign_in_envelope(en_client, full_event):
    response = tool_call(en_client, "leave_waitlist", "leave")
    assert (response.status_code, response["Content-Type"]) == (401, "application/json")
    body = response.json()
    assert (body["ok"], body["code"], body["reason"]) == (False, "AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert "/accounts/login/" in body["nextAction"] and body["uiUpdated"] is False
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("leave_waitlist", "agent", "SIGN_IN_REQUIRED")
    ]
