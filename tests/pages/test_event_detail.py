"""/events/<id>/: every state of the page shows the right actions and none that cannot succeed."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from events.choices import Location
from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory

from .conftest import DECLARATIVE_TOOL_ATTRIBUTES, HTMX, manifest_tools

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def detail(client, event, **kwargs):
    return client.get(reverse("event-detail", kwargs={"event_id": event.public_id}), **kwargs)


def page(client, event, **kwargs) -> str:
    response = detail(client, event, **kwargs)
    assert response.status_code == 200
    return response.content.decode()


def test_detail_shows_everything_about_the_event(en_client):
    event = EventFactory(
        title="Agent UX clinic",
        summary="Bring your forms.",
        description="We review real forms together.",
        venue="Room 3, Taipei",
        paid=True,
        capacity=20,
    )
    html = page(en_client, event)
    for text in (
        "Agent UX clinic",
        "Bring your forms.",
        "We review real forms together.",
        "Room 3, Taipei",
        "TWD 500",
        "Beginner",
        "20 people",
        "20 seats left",
        "Taipei",
    ):
        assert text in html, text
    assert f'href="/events/{event.public_id}/calendar.ics"' in html


def test_open_event_for_anonymous_visitor_offers_sign_in_not_the_register_form(en_client, event):
    html = page(en_client, event)
    assert 'id="register-form"' not in html
    assert 'id="cancel-form"' not in html
    assert "Sign in to register" in html
    assert f'href="/accounts/login/?next=/events/{event.public_id}/"' in html
    assert 'aria-pressed="false"' in html
    # Nothing to press: register_event answers at once (with "sign in first").
    assert "data-webmcp-confirm" not in html
    register = manifest_tools(html)["register_event"]
    assert register["binding"] == "route" and "confirm" not in register


def test_open_event_for_signed_in_visitor_has_the_exact_register_form(signed_in_en_client, event):
    html = page(signed_in_en_client, event)
    form = re.search(r'<form id="register-form"[^>]*>', html).group(0)
    assert f'action="/events/{event.public_id}/register/"' in form
    assert 'method="post"' in form
    # The form the person presses to confirm the agent's register_event call (the page's event).
    assert 'data-webmcp-confirm="register_event"' in form
    assert "data-webmcp-values" not in form
    assert html.count("data-webmcp-confirm=") == 1
    for attribute in DECLARATIVE_TOOL_ATTRIBUTES:
        assert attribute not in html, attribute
    assert "Sign in to register" not in html
    assert 'id="cancel-form"' not in html
    tools = manifest_tools(html)
    assert tools["register_event"]["confirm"] is True
    assert tools["register_event"]["endpoint"] == "/events/{event_id}/register/"
    assert tools["register_event"]["routeValues"] == {"event_id": event.public_id}
    assert "cancel_registration" not in tools


def test_registered_visitor_sees_the_cancel_form_and_no_register_form(signed_in_en_client, user, event):
    RegistrationFactory(user=user, event=event)
    html = page(signed_in_en_client, event)
    form = re.search(r'<form id="cancel-form"[^>]*>', html).group(0)
    assert f'action="/events/{event.public_id}/cancel/"' in form
    assert 'data-webmcp-confirm="cancel_registration"' in form
    assert html.count("data-webmcp-confirm=") == 1
    for attribute in DECLARATIVE_TOOL_ATTRIBUTES:
        assert attribute not in html, attribute
    assert "You are registered for this event." in html
    assert 'id="register-form"' not in html
    tools = manifest_tools(html)
    assert tools["cancel_registration"]["confirm"] is True
    assert tools["cancel_registration"]["routeValues"] == {"event_id": event.public_id}
    assert "register_event" not in tools


def register_offer(event, *, signed_in: bool) -> str:
    """The markup that offers registering for `event`: the register form's action for a signed-in
    visitor, the sign-in link that comes back to the event for an anonymous one, named for registering
    (a full event's page has a sign-in link for its waiting list instead)."""
    if signed_in:
        return f'action="/events/{event.public_id}/register/"'
    return f'href="/accounts/login/?next=/events/{event.public_id}/">Sign in to register<'


def state_notice(html: str) -> str | None:
    found = re.search(r'<p class="notice[^"]*" id="event-state">(.*?)</p>', html, re.S)
    return found.group(1).strip() if found else None


@pytest.mark.parametrize(
    "signed_in", [pytest.param(True, id="signed-in"), pytest.param(False, id="anonymous")]
)
def test_a_full_event_says_full_and_offers_no_way_to_register(request, other_user, signed_in):
    client = request.getfixturevalue("signed_in_en_client" if signed_in else "en_client")
    one_seat_left, full = EventFactory(capacity=2), EventFactory(capacity=2)
    RegistrationFactory(user=other_user, event=one_seat_left)
    RegistrationFactory(user=other_user, event=full)
    RegistrationFactory(event=full)
    # The control: with one seat left this visitor is offered registering, so the markup looked for
    # below is the real offer and its absence on the full event's page is the rule's doing.
    control = page(client, one_seat_left)
    assert register_offer(one_seat_left, signed_in=signed_in) in control
    assert "register_event" in manifest_tools(control)
    assert state_notice(control) is None

    html = page(client, full)
    assert state_notice(html) == "This event is full: there are no seats left."
    assert register_offer(full, signed_in=signed_in) not in html
    assert 'id="register-form"' not in html
    assert "register_event" not in manifest_tools(html)
    assert detail(client, full).context["webmcp_state"]["may_register"] is False


def test_cancelled_event_says_so_and_offers_neither_register_nor_save(signed_in_en_client):
    event = EventFactory(cancelled=True)
    html = page(signed_in_en_client, event)
    assert "This event has been cancelled." in html
    assert 'id="register-form"' not in html
    assert 'id="save-toggle"' not in html
    assert "/save/" not in html


def test_past_event_says_so_and_offers_no_register_or_cancel(signed_in_en_client, user):
    event = EventFactory(past=True)
    RegistrationFactory(user=user, event=event)
    html = page(signed_in_en_client, event)
    assert "already started or ended" in html
    assert 'id="register-form"' not in html
    assert 'id="cancel-form"' not in html
    assert "data-webmcp-confirm" not in html
    assert not {"register_event", "cancel_registration"} & set(manifest_tools(html))


def test_saved_event_offers_unsave(en_client, event):
    session = en_client.session
    session["visitor_token"] = "tok-123"
    session.save()
    SavedEventFactory(user=None, visitor_token="tok-123", event=event)
    html = page(en_client, event)
    assert 'aria-pressed="true"' in html
    assert f'hx-post="/events/{event.public_id}/unsave/"' in html


def test_draft_and_unknown_events_are_404(en_client):
    assert detail(en_client, EventFactory(draft=True)).status_code == 404
    assert en_client.get("/events/evt-nothing-here/").status_code == 404


def test_htmx_get_returns_the_main_region_with_its_manifest(en_client, event):
    html = page(en_client, event, headers=HTMX)
    assert "<html" not in html
    assert html.lstrip().startswith('<main id="main" data-webmcp-region')
    assert 'id="webmcp-manifest"' in html


def test_webmcp_state_in_context(signed_in_en_client, user, event):
    RegistrationFactory(user=user, event=event)
    state = detail(signed_in_en_client, event).context["webmcp_state"]
    assert state["signed_in"] is True
    assert state["registered"] is True
    # The answers of events.policies.permissions, which the tool predicates and buttons read.
    assert (state["may_register"], state["may_cancel"], state["may_save"]) == (True, True, True)
    assert isinstance(state["stateVersion"], int)


def test_back_link_keeps_a_valid_search(en_client, event):
    html = page(en_client, event, query_params={"from": "location=taipei&level=beginner&page=2"})
    assert 'href="/events/?location=taipei&amp;level=beginner&amp;page=2"' in html


@pytest.mark.parametrize("raw", ["location=mars", "https://evil.example/", "colour=red", "page=-1"])
def test_back_link_ignores_an_invalid_search(en_client, event, raw):
    html = page(en_client, event, query_params={"from": raw})
    assert "← Back to the event list" in html
    assert re.search(r'<a href="/events/">← Back', html)


def test_online_event_is_a_virtual_location_in_json_ld(en_client):
    event = EventFactory(location=Location.ONLINE, venue="Google Meet")
    assert "VirtualLocation" in page(en_client, event)
