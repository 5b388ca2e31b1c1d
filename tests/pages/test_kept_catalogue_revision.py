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


def edited(event):
    event.title = "After the edit"
    event.save()


def seat_taken(event):
    RegistrationFactory(event=event)


@pytest.mark.parametrize(
    ("page", "change", "before", "after"),
    [
        pytest.param(LIST, edited, "Before the edit", "After the edit", id="list-page-an-edit"),
        pytest.param("/events/{event}/", seat_taken, "2 seats left", "1 seat left", id="event-page-a-seat"),
    ],
)
def test_an_anonymous_revalidation_reads_nothing_and_a_change_reaches_them_within_the_period(
    kept, django_assert_num_queries, signed_in_en_client, page, change, before, after
):
    event = EventFactory(title="Before the edit", capacity=2)
    page = page.format(event=event.public_id)
    anonymous = Client(headers=EN)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        first = anonymous.get(page)
        assert first.status_code == 200 and before in first.text
        with django_assert_num_queries(0):
            assert anonymous.get(page, headers={"If-None-Match": first["ETag"]}).status_code == 304

        change(event)
        # Within the period: the anonymous visitor's copy still stands; the signed-in one sees the change.
        assert anonymous.get(page, headers={"If-None-Match": first["ETag"]}).status_code == 304
        assert after in signed_in_en_client.get(page).text

        clock.shift(timedelta(seconds=PERIOD + 1))
        again = anonymous.get(page, headers={"If-None-Match": first["ETag"]})
        assert again.status_code == 200 and after in again.text
        assert again["ETag"] != first["ETag"]


def test_a_missing_event_is_read_each_time(kept):
    anonymous = Client(headers=EN)
    assert anonymous.get("/events/evt-missing/").status_code == 404
    EventFactory(public_id="evt-missing")
    assert anonymous.get("/events/evt-missing/").status_code == 200


def test_without_a_period_an_anonymous_visitor_sees_a_change_at_once(settings, signed_in_en_client):
    settings.CATALOGUE_REVISION_SECONDS = 0
    event = EventFactory(title="Before the edit")
    anonymous = Client(headers=EN)
    first = anonymous.get(LIST)
    event.title = "After the edit"
    event.save()
    again = anonymous.get(LIST, headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 200 and "After the edit" in again.text
