"""find_attendee on the check-in page (`/events/<id>/check-in/`), through Django's test client: the
door's search form, for the event's door staff and managers only."""

from __future__ import annotations

from html import unescape

import pytest

from events.models import Activity
from tests.factories import RegistrationFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_finding_attendees_when_not_the_events_staff_is_the_403_page_that_says_why(
    signed_in_en_client, event
):
    RegistrationFactory(event=event, user=UserFactory(first_name="Ada", last_name="Lovelace"))
    response = signed_in_en_client.post(f"/events/{event.public_id}/check-in/find/", {"query": "ada"})
    assert response.status_code == 403
    html = unescape(response.content.decode())
    assert "Only this event's door staff and managers can check people in." in html
    assert "Lovelace" not in html  # nobody found is shown to someone who may not search
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        ("find_attendee", "ui", "NOT_EVENT_STAFF")
    ]
