"""The dashboard's "tools per page and state" is what the pages really offer: each row is compared with
the manifest a page renders for a visitor in that state (and the MCP row with tools/list)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone, translation
from django_webmcp.mcp import mcp_tools

from core.visitors import Visitor
from events import actions
from events.choices import StaffRole
from events.models import EventStaff
from readiness.matrix import page_kinds
from tests.factories import EventFactory, RegistrationFactory, UserFactory
from tests.pages.conftest import manifest_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def offered(client: Client, path: str) -> list[str]:
    return sorted(tool["name"] for tool in manifest_in(client.get(path).content.decode())["tools"])


def row(page: str, state: str) -> list[str]:
    with translation.override("en"):
        [kind] = [k for k in page_kinds() if str(k.page) == page and str(k.state) == state]
    return sorted(tool.name for tool in kind.tools)


def signed_in(user=None) -> tuple[Client, object]:
    user = user or UserFactory()
    client = Client()
    client.force_login(user)
    return client, user


def test_each_row_is_what_the_page_offers():
    open_event = EventFactory(capacity=10)
    full = EventFactory(capacity=1)
    RegistrationFactory(event=full)
    cancelled = EventFactory(cancelled=True)
    past = EventFactory(past=True)
    detail = "/events/{}/"

    assert offered(Client(), "/events/") == row("Event list", "anyone")
    assert offered(Client(), detail.format(open_event.public_id)) == row("Event page", "anonymous")
    client, user = signed_in()
    assert offered(client, detail.format(open_event.public_id)) == row("Event page", "signed in")
    assert offered(client, detail.format(full.public_id)) == row("Event page", "full")
    assert offered(client, detail.format(cancelled.public_id)) == row("Event page", "cancelled")
    assert offered(client, detail.format(past.public_id)) == row("Event page", "past")
    assert offered(client, "/me/") == row("My events", "nothing to cancel")

    RegistrationFactory(event=open_event, user=user)
    assert offered(client, detail.format(open_event.public_id)) == row("Event page", "registered")
    assert offered(client, "/me/") == row("My events", "a registration that can be cancelled")

    actions.call("join_waitlist", visitor=Visitor(user=user), channel="ui", event_id=full.public_id)
    assert offered(client, detail.format(full.public_id)) == row("Event page", "on the waiting list")
    holder = full.registrations.get().user
    actions.call("cancel_registration", visitor=Visitor(user=holder), channel="ui", event_id=full.public_id)
    assert offered(client, detail.format(full.public_id)) == row("Event page", "a seat held for them")


def test_the_check_in_rows_are_what_the_page_offers_door_staff_and_others():
    event = EventFactory(capacity=10)
    path = f"/events/{event.public_id}/check-in/"
    staff, user = signed_in()
    EventStaff.objects.create(event=event, user=user, role=StaffRole.DOOR)
    assert (
        offered(staff, path) == row("Check-in page", "door staff") == ["check_in_attendee", "find_attendee"]
    )
    stranger, _ = signed_in()
    assert stranger.get(path).status_code == 403
    assert offered(stranger, path) == row("Check-in page", "not door staff (403)") == []
    with translation.override("en"):
        [kind] = [k for k in page_kinds() if str(k.page) == "Check-in page" and str(k.state) == "door staff"]
    assert {tool.name: tool.confirmed for tool in kind.tools} == {
        "check_in_attendee": True,
        "find_attendee": False,
    }


def test_the_mcp_row_is_tools_list():
    assert row("MCP (/mcp)", "with a token; reads also without") == sorted(tool.name for tool in mcp_tools())


def test_close_to_the_start_is_not_a_row_but_follows_the_policy():
    """Within the offer stop a full event offers no waiting list (a state the table does not list)."""
    soon = EventFactory(capacity=1, starts_at=timezone.now() + timedelta(hours=1))
    RegistrationFactory(event=soon)
    client, _ = signed_in()
    assert "join_waitlist" not in offered(client, f"/events/{soon.public_id}/")
