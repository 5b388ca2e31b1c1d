"""/me/: saved events and registrations; anonymous visitors see their session's saves."""

from __future__ import annotations

import re

import pytest

from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory

from .conftest import HTMX, manifest_tools

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


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


def registration_rows(html: str) -> dict[str, str]:
    """The rows of the "Registrations" section (confirmed registrations), by event title."""
    section = re.search(r'<section[^>]*aria-labelledby="registrations-heading">(.*?)</section>', html, re.S)
    assert section, "the page has no Registrations section"
    confirmed = section.group(1).partition("Cancelled registrations")[0]
    rows = re.findall(r'<li class="compact-item">(.*?)</li>', confirmed, re.S)
    return {re.search(r'class="compact-title"[^>]*>([^<]*)</a>', row).group(1): row for row in rows}


def test_me_offers_no_cancel_for_a_started_event(signed_in_en_client, user):
    started = EventFactory(title="Started one", past=True)
    upcoming = EventFactory(title="Upcoming one")
    RegistrationFactory(user=user, event=started)
    RegistrationFactory(user=user, event=upcoming)
    response = signed_in_en_client.get("/me/")
    assert response.status_code == 200
    rows = registration_rows(response.content.decode())
    # Both confirmed registrations are listed, so a missing button is the rule's doing, not a missing row.
    assert set(rows) == {"Started one", "Upcoming one"}
    # The control: an upcoming registration has the cancel form this test looks for.
    assert f'action="/events/{upcoming.public_id}/cancel/"' in rows["Upcoming one"]
    assert 'data-webmcp-confirm="cancel_registration"' in rows["Upcoming one"]
    # The rule: the started one offers no cancel, neither to the person nor to an agent's call.
    assert "<form" not in rows["Started one"]
    assert "data-webmcp-confirm" not in rows["Started one"]
    assert "Started or ended" in rows["Started one"]


def test_me_offers_no_cancel_tool_when_every_registration_has_started(signed_in_en_client, user):
    RegistrationFactory(user=user, event=EventFactory(title="Started one", past=True))
    response = signed_in_en_client.get("/me/")
    html = response.content.decode()
    assert set(registration_rows(html)) == {"Started one"}
    assert response.context["webmcp_state"]["cancellable"] is False
    assert "cancel_registration" not in manifest_tools(html)


def test_me_htmx_returns_the_region(signed_in_en_client):
    html = signed_in_en_client.get("/me/", headers=HTMX).content.decode()
    assert html.lstrip().startswith('<main id="main" data-webmcp-region')


def test_me_webmcp_state(signed_in_en_client):
    state = signed_in_en_client.get("/me/").context["webmcp_state"]
    assert state["signed_in"] is True
    assert state["stateVersion"] == 0
