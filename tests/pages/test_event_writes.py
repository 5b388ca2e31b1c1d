"""Page writes: save, unsave, register, cancel — through the use cases, PRG without htmx, region with it."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.core import mail
from django.test import Client

from core.visitors import SESSION_TOKEN_KEY
from events.choices import RegistrationStatus
from events.models import Activity, Registration, SavedEvent
from tests.factories import EventFactory, RegistrationFactory
from tests.tasks import run_tasks

from .conftest import EN, HTMX, manifest_in, manifest_tools

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def url(event, action: str) -> str:
    return f"/events/{event.public_id}/{action}/"


def follow_messages(response) -> str:
    return " ".join(str(message) for message in response.context["messages"])


# ── save / unsave ──────────────────────────────────────────────────────────────────────────────


def test_anonymous_save_uses_a_session_token_and_redirects(en_client, event):
    response = en_client.post(url(event, "save"))
    assert response.status_code == 302
    assert response["Location"] == f"/events/{event.public_id}/"
    token = en_client.session[SESSION_TOKEN_KEY]
    assert SavedEvent.objects.filter(visitor_token=token, event=event).exists()
    html = en_client.get(response["Location"]).content.decode()
    assert 'aria-pressed="true"' in html
    assert "Saved. You can find it under My events." in html


def test_htmx_save_returns_the_refreshed_main_region(signed_in_en_client, user, event):
    response = signed_in_en_client.post(url(event, "save"), headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<main id="main" data-webmcp-region')
    assert 'aria-pressed="true"' in html
    assert "Saved. You can find it under My events." in html
    assert 'id="webmcp-manifest"' in html
    assert SavedEvent.objects.filter(user=user, event=event).count() == 1


def test_save_twice_says_already_saved(signed_in_en_client, event):
    signed_in_en_client.post(url(event, "save"))
    response = signed_in_en_client.post(url(event, "save"), follow=True)
    assert "already in your saved events" in follow_messages(response)


def test_a_page_post_records_ui_and_keeps_a_declared_mode_as_a_claim(signed_in_en_client, event):
    signed_in_en_client.post(url(event, "save"))
    signed_in_en_client.post(url(event, "unsave"), headers={"X-Client-Mode": "agent"})
    rows = Activity.objects.filter(action__in=["save_event", "unsave_event"])
    modes = {
        action: (mode, claimed)
        for action, mode, claimed in rows.values_list("action", "mode", "claimed_mode")
    }
    assert modes == {"save_event": ("ui", ""), "unsave_event": ("ui", "agent")}


def test_saving_a_cancelled_event_is_refused_with_a_message(signed_in_en_client):
    event = EventFactory(cancelled=True)
    response = signed_in_en_client.post(url(event, "save"), follow=True)
    assert response.status_code == 200
    assert "This event has been cancelled." in follow_messages(response)
    assert not SavedEvent.objects.exists()


def test_unsave_from_me_goes_back_to_me(signed_in_en_client, user, event):
    signed_in_en_client.post(url(event, "save"))
    response = signed_in_en_client.post(url(event, "unsave"), {"next": "/me/"})
    assert response["Location"] == "/me/"
    assert not SavedEvent.objects.filter(user=user).exists()
    region = signed_in_en_client.post(url(event, "save"), headers=HTMX)
    assert 'id="event-title"' in region.content.decode()
    region = signed_in_en_client.post(url(event, "unsave"), {"next": "/me/"}, headers=HTMX).content.decode()
    assert "You have not saved any events yet." in region


def test_writes_refuse_get(en_client, event):
    for action in ("save", "unsave", "register", "cancel"):
        assert en_client.get(url(event, action)).status_code == 405


def test_writes_require_csrf(event):
    client = Client(enforce_csrf_checks=True, headers=EN)
    assert client.post(url(event, "save")).status_code == 403


def test_write_on_unknown_event_is_404(signed_in_en_client):
    assert signed_in_en_client.post("/events/evt-nothing/save/").status_code == 404


def test_unsave_of_an_unknown_event_is_404_and_recorded_as_event_not_found(signed_in_en_client):
    assert signed_in_en_client.post("/events/evt-nothing/unsave/").status_code == 404
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("unsave_event", "ui", "EVENT_NOT_FOUND")
    ]


# ── register / cancel ─────────────────────────────────────────────────────────────────────────


def test_register_redirects_with_a_message_and_sends_one_email(signed_in_en_client, user, event):
    response = signed_in_en_client.post(url(event, "register"))
    assert response.status_code == 302
    assert response["Location"] == f"/events/{event.public_id}/"
    assert Registration.objects.get(user=user, event=event).status == RegistrationStatus.CONFIRMED
    html = signed_in_en_client.get(response["Location"]).content.decode()
    assert "You are registered. A confirmation e-mail is on its way." in html
    assert 'id="cancel-form"' in html
    run_tasks()
    assert len(mail.outbox) == 1


def test_register_keeps_the_back_link_of_the_page_it_came_from(signed_in_en_client, event):
    referer = f"http://testserver/events/{event.public_id}/?from=location%3Dtaipei"
    response = signed_in_en_client.post(url(event, "register"), headers={"Referer": referer})
    assert response["Location"] == f"/events/{event.public_id}/?from=location%3Dtaipei"


def test_register_ignores_a_foreign_referer(signed_in_en_client, event):
    response = signed_in_en_client.post(url(event, "register"), headers={"Referer": "https://evil.example/x"})
    assert response["Location"] == f"/events/{event.public_id}/"


def test_anonymous_register_is_sent_to_sign_in(en_client, event):
    response = en_client.post(url(event, "register"))
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/events/{event.public_id}/"
    assert not Registration.objects.exists()


def test_register_when_full_shows_a_message_not_an_error(signed_in_en_client, other_user):
    event = EventFactory(capacity=1)
    RegistrationFactory(user=other_user, event=event)
    response = signed_in_en_client.post(url(event, "register"), follow=True)
    assert response.status_code == 200
    assert "this event is full" in follow_messages(response)
    assert 'id="register-form"' not in response.content.decode()


def test_register_for_a_past_event_shows_registration_closed(signed_in_en_client):
    event = EventFactory(past=True)
    response = signed_in_en_client.post(url(event, "register"), headers=HTMX)
    assert response.status_code == 200
    assert "already started" in response.content.decode()


def test_register_twice_says_already_registered_and_sends_no_second_email(signed_in_en_client, event):
    signed_in_en_client.post(url(event, "register"))
    response = signed_in_en_client.post(url(event, "register"), follow=True)
    assert "already registered" in follow_messages(response)
    run_tasks()
    assert len(mail.outbox) == 1


def test_cancel_without_confirmation_asks_first(signed_in_en_client, user, event):
    RegistrationFactory(user=user, event=event)
    response = signed_in_en_client.post(url(event, "cancel"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Cancel your registration?" in html
    assert 'name="confirm" value="yes"' in html
    assert Registration.objects.get(user=user, event=event).is_active


def test_confirmed_cancel_cancels_and_redirects(signed_in_en_client, user, event):
    RegistrationFactory(user=user, event=event)
    response = signed_in_en_client.post(url(event, "cancel"), {"confirm": "yes"}, follow=True)
    assert "Your registration is cancelled." in follow_messages(response)
    assert not Registration.objects.get(user=user, event=event).is_active
    assert 'id="register-form"' in response.content.decode()


def test_htmx_cancel_from_me_returns_the_me_region(signed_in_en_client, user, event):
    RegistrationFactory(user=user, event=event)
    response = signed_in_en_client.post(
        url(event, "cancel"), {"confirm": "yes", "next": "/me/"}, headers=HTMX
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<main id="main" data-webmcp-region')
    assert "Cancelled registrations" in html


def test_cancel_without_a_registration_is_a_message(signed_in_en_client, event):
    response = signed_in_en_client.post(url(event, "cancel"), {"confirm": "yes"}, follow=True)
    assert "You have no registration for this event." in follow_messages(response)


def test_htmx_write_region_carries_the_detail_pages_tools(signed_in_en_client, event):
    """The refreshed region replaces the page's manifest: it must list the page's tools, not none."""
    html = signed_in_en_client.post(url(event, "save"), headers=HTMX).content.decode()
    tools = manifest_tools(html)
    assert manifest_in(html)["route"] == "event-detail"  # the page's route, not the POST endpoint's
    assert {"get_event_details", "register_event", "save_event"} <= set(tools)
    assert tools["register_event"]["confirm"] is True
    assert tools["register_event"]["routeValues"] == {"event_id": event.public_id}
    # and the form the person presses to confirm it is in the region too
    assert 'data-webmcp-confirm="register_event"' in html
    assert "webmcp-result" not in html  # a person's write gets no tool result


def test_htmx_write_from_me_carries_the_me_tools(signed_in_en_client, user, event):
    RegistrationFactory(user=user, event=event)
    html = signed_in_en_client.post(url(event, "unsave"), {"next": "/me/"}, headers=HTMX).content.decode()
    cancel = manifest_tools(html)["cancel_registration"]
    assert manifest_in(html)["route"] == "me"
    assert (cancel["binding"], cancel["confirm"]) == ("input", True)
    # the row's cancel form, which the person presses to confirm a call naming this event
    [values] = re.findall(r"data-webmcp-confirm=\"cancel_registration\" data-webmcp-values='([^']*)'", html)
    assert json.loads(unescape(values)) == {"event_id": event.public_id}


def test_cancel_confirmation_returns_to_the_page_it_came_from(signed_in_en_client, user, event):
    RegistrationFactory(user=user, event=event)
    came_from = f"/events/{event.public_id}/?from=location%3Dtaipei"
    page = signed_in_en_client.post(
        url(event, "cancel"), headers={"Referer": f"http://testserver{came_from}"}
    )
    assert f'name="next" value="{came_from}"' in page.content.decode()
    response = signed_in_en_client.post(url(event, "cancel"), {"confirm": "yes", "next": came_from})
    assert response["Location"] == came_from
