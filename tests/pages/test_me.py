"""/me/: saved events and registrations; anonymous visitors see their session's saves."""

from __future__ import annotations

import pytest

from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory

from .conftest import HTMX

pytestmark = pytest.mark.django_db


def test_anonymous_me_shows_session_saves_and_an_invitation(en_client, event):
    en_client.post(f"/events/{event.public_id}/save/")
    html = en_client.get("/me/").content.decode()
    assert "WebMCP 入門工作坊" in html
    assert "Sign in to register for events." in html
    assert "Registrations" not in html


def test_signed_in_me_separates_confirmed_and_cancelled(signed_in_en_client, user):
    saved = EventFactory(title="Saved one")
    going = EventFactory(title="Going one")
    dropped = EventFactory(title="Dropped one")
    SavedEventFactory(user=user, event=saved)
    RegistrationFactory(user=user, event=going)
    RegistrationFactory(user=user, event=dropped, status="cancelled")
    html = signed_in_en_client.get("/me/").content.decode()
    assert "Saved one" in html
    confirmed, _, cancelled = html.partition("Cancelled registrations")
    assert "Going one" in confirmed and "Dropped one" not in confirmed
    assert "Dropped one" in cancelled
    assert f'hx-post="/events/{going.public_id}/cancel/"' in html
    assert "hx-confirm=" in html
    assert f'action="/events/{saved.public_id}/unsave/"' in html
    assert "Sign in to register for events." not in html


def test_me_offers_no_cancel_for_a_started_event(signed_in_en_client, user):
    past = EventFactory(past=True)
    RegistrationFactory(user=user, event=past)
    html = signed_in_en_client.get("/me/").content.decode()
    assert f"/events/{past.public_id}/cancel/" not in html


def test_me_htmx_returns_the_region(signed_in_en_client):
    html = signed_in_en_client.get("/me/", headers=HTMX).content.decode()
    assert html.lstrip().startswith('<main id="main" data-webmcp-region')


def test_me_webmcp_state(signed_in_en_client):
    state = signed_in_en_client.get("/me/").context["webmcp_state"]
    assert state["signed_in"] is True
    assert state["stateVersion"] == 0
