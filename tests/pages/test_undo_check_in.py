"""undo_check_in on the check-in page (`/events/<id>/check-in/undo/`), through Django's test client:
the button under an admitted answer, for whoever let the person in (or a manager), within minutes."""

from __future__ import annotations

from html import unescape

import pytest
from django.test import Client

from core.visitors import Visitor
from events import actions
from events.choices import StaffRole
from events.models import Activity, CheckIn, EventStaff
from tests.factories import RegistrationFactory, UserFactory

from .conftest import EN

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_undoing_another_door_staff_members_check_in_is_refused_with_undo_not_allowed(event):
    mei, kai = UserFactory(username="mei"), UserFactory(username="kai")
    for person in (mei, kai):
        EventStaff.objects.create(event=event, user=person, role=StaffRole.DOOR)
    ada = RegistrationFactory(event=event)
    actions.call(
        "check_in_attendee",
        visitor=Visitor(user=mei),
        channel="ui",
        event_id=event.public_id,
        attendee_id=ada.pk,
    )
    client = Client(headers=EN)
    client.force_login(kai)
    page = f"/events/{event.public_id}/check-in/"
    response = client.post(f"{page}undo/", {"attendee_id": ada.pk}, follow=True)
    assert response.redirect_chain == [(page, 302)]
    html = unescape(response.content.decode())
    assert 'data-reason="UNDO_NOT_ALLOWED"' in html and "Not undone" in html
    assert "This check-in can no longer be undone here (too long ago, or by someone else)." in html
    assert CheckIn.objects.get(registration=ada).undone_at is None
    assert list(Activity.objects.filter(action="undo_check_in").values_list("mode", "outcome")) == [
        ("ui", "UNDO_NOT_ALLOWED")
    ]
