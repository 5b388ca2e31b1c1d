"""check_in_attendee as a WebMCP tool call on the check-in page's route
(`/events/<id>/check-in/admit/` with `X-WebMCP-Tool`), through Django's test client."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from events.choices import StaffRole
from events.models import Activity, CheckIn, EventStaff
from tests.factories import EventFactory, RegistrationFactory, UserFactory

from .conftest import EN

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_check_in_tool_call_for_another_events_attendee_is_the_attendee_not_found_envelope(event):
    staff = UserFactory(username="mei")
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    elsewhere = RegistrationFactory(event=EventFactory(public_id="evt-not-this-one"))
    client = Client(headers=EN)
    client.force_login(staff)
    page = f"/events/{event.public_id}/check-in/"
    response = client.post(
        f"{page}admit/",
        data=json.dumps({"attendee_id": elsewhere.pk}),
        content_type="application/json",
        headers={
            "X-WebMCP-Tool": "check_in_attendee",
            "X-Client-Mode": "agent",
            "X-WebMCP-Page": f"http://testserver{page}",
            "Accept": "text/html, application/json",
        },
    )
    assert (response.status_code, response["Content-Type"]) == (404, "application/json")
    body = response.json()
    assert (body["ok"], body["code"], body["reason"]) == (False, "NOT_FOUND", "ATTENDEE_NOT_FOUND")
    assert "find_attendee" in body["nextAction"] and body["uiUpdated"] is False
    assert b"door-answer" not in response.content  # the envelope alone: the page is left as it was
    assert not CheckIn.objects.exists()
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("check_in_attendee", "agent", "ATTENDEE_NOT_FOUND")
    ]
