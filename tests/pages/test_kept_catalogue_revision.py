"""The list page's and an event page's revisions kept for visitors without an account
(`CATALOGUE_REVISION_SECONDS`, as the site runs): their revalidation is a 304 that reads nothing from
the database, a change reaches them within the period, and a signed-in visitor sees it at once
(events.selectors.kept_catalogue_revision, kept_event_revision)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core.cache import caches
from django.test import Client
from django.utils import timezone

from tests.factories import EventFactory, RegistrationFactory

from .conftest import EN

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LIST = "/events/?location=taipei"
PERIOD = 5


@pytest.fixture
def kept(settings):
    settings.CATALOGUE_REVISION_SECONDS = PERIOD
    caches[settings.PAGE_CACHE].clear()
    yield
    caches[settings.PAGE_CACHE].clear()


def test_an_anonymous_revalidation_reads_nothing_and_a_change_reaches_them_within_the_period(
    kept, django_assert_num_queries, signed_in_en_client
):
    event = EventFactory(title="Before the edit")
    anonymous = Client(headers=EN)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        first = anonymous.get(LIST)
        assert first.status_code == 200 and "Before the edit" in first.text
        with django_assert_num_queries(0):
            assert anonymous.get(LIST, headers={"If-None-Match": first["ETag"]}).status_code == 304

        event.title = "After the edit"
        event.save()
        # Within the period: the anonymous visitor's copy still stands; the signed-in one sees the edit.
        assert anonymous.get(LIST, headers={"If-None-Match": first["ETag"]}).status_code == 304
        assert "After the edit" in signed_in_en_client.get(LIST).text

        clock.shift(timedelta(seconds=PERIOD + 1))
        after = anonymous.get(LIST, headers={"If-None-Match": first["ETag"]})
        assert after.status_code == 200 and "After the edit" in after.text
        assert after["ETag"] != first["ETag"]


def test_an_event_pages_anonymous_revalidation_reads_nothing_and_a_seat_taken_shows_within_the_period(
    kept, django_assert_num_queries, signed_in_en_client
):
    event = EventFactory(capacity=2)
    page = f"/events/{event.public_id}/"
    anonymous = Client(headers=EN)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        first = anonymous.get(page)
        assert first.status_code == 200 and "2 seats left" in first.text
        with django_assert_num_queries(0):
            assert anonymous.get(page, headers={"If-None-Match": first["ETag"]}).status_code == 304

        RegistrationFactory(event=event)
        # Within the period: the anonymous visitor's copy still stands; the signed-in one sees the seat.
        assert anonymous.get(page, headers={"If-None-Match": first["ETag"]}).status_code == 304
        assert "1 seat left" in signed_in_en_client.get(page).text

        clock.shift(timedelta(seconds=PERIOD + 1))
        after = anonymous.get(page, headers={"If-None-Match": first["ETag"]})
        assert after.status_code == 200 and "1 seat left" in after.text
        assert after["ETag"] != first["ETag"]
    assert anonymous.get("/events/evt-missing/").status_code == 404  # a missing event is not kept


def test_without_a_period_an_anonymous_visitor_sees_a_change_at_once(settings, signed_in_en_client):
    settings.CATALOGUE_REVISION_SECONDS = 0
    event = EventFactory(title="Before the edit")
    anonymous = Client(headers=EN)
    first = anonymous.get(LIST)
    event.title = "After the edit"
    event.save()
    again = anonymous.get(LIST, headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 200 and "After the edit" in again.text
