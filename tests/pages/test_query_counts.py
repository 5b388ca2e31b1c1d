"""The pages run a fixed number of queries however many events, saves and registrations there are."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured)


def add_events(count: int, user=None, *, offset: int = 0) -> list:
    """`count` upcoming events with seats taken by others and, for `user`, saved and registered."""
    start = timezone.now() + timedelta(days=3)
    events = []
    for n in range(count):
        event = EventFactory(starts_at=start + timedelta(hours=offset + n), capacity=50)
        RegistrationFactory(event=event)
        if user is not None:
            SavedEventFactory(user=user, event=event)
            RegistrationFactory(user=user, event=event, status="cancelled" if n % 2 else "confirmed")
        events.append(event)
    return events


@pytest.mark.parametrize("signed_in", [False, True], ids=["anonymous", "signed-in"])
def test_list_query_count_is_the_same_for_1_and_25_events(client, user, signed_in):
    if signed_in:
        client.force_login(user)
    owner = user if signed_in else None
    add_events(1, owner)
    count_with_1 = queries(client, "/events/?location=taipei")
    add_events(24, owner, offset=1)
    count_with_25 = queries(client, "/events/?location=taipei")
    assert count_with_25 == count_with_1


def test_detail_query_count_is_the_same_for_1_and_25_registrations(signed_in_client, user):
    event = EventFactory(capacity=100)
    RegistrationFactory(user=user, event=event)
    RegistrationFactory(event=event)
    url = f"/events/{event.public_id}/"
    count_with_1 = queries(signed_in_client, url)
    for _ in range(24):
        RegistrationFactory(event=event, user=UserFactory())
    count_with_25 = queries(signed_in_client, url)
    assert count_with_25 == count_with_1


def test_me_query_count_is_the_same_for_1_and_25_events(signed_in_client, user):
    add_events(1, user)
    count_with_1 = queries(signed_in_client, "/me/")
    add_events(24, user, offset=1)
    count_with_25 = queries(signed_in_client, "/me/")
    assert count_with_25 == count_with_1


def test_anonymous_me_query_count_is_the_same_for_1_and_25_saves(client):
    first, *others = add_events(25)
    client.post(f"/events/{first.public_id}/save/")
    count_with_1 = queries(client, "/me/")
    for event in others:
        client.post(f"/events/{event.public_id}/save/")
    count_with_25 = queries(client, "/me/")
    assert count_with_25 == count_with_1


def test_me_signed_in_is_six_statements_at_most(signed_in_client, user):
    """The session with its account (one statement), then one per list (registrations with their
    events, waiting lists, saves) and the tools' state version: access tokens live on their own page."""
    add_events(25, user)
    assert queries(signed_in_client, "/me/") <= 6
