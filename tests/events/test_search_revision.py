"""The API search's revision (its ETag's part of the catalogue): read with the page in its one
statement (`search_events(with_revision=True)`) it is what `search_revision` reads alone, before and
after every kind of change the answer can show, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.visitors import Visitor
from events.selectors import search_events, search_revision
from tests.factories import EventFactory, RegistrationFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def with_page() -> tuple | None:
    return search_events(visitor=Visitor(), location="taipei", with_revision=True).revision


@pytest.fixture
def events():
    soon = timezone.now() + timedelta(days=3)
    return [
        EventFactory(public_id=f"evt-rev-{n}", location="taipei", starts_at=soon + timedelta(hours=n))
        for n in range(3)
    ]


def test_the_page_reads_its_revision_in_its_one_statement(events):
    with CaptureQueriesContext(connection) as captured:
        revision = with_page()
    assert len(captured) == 1
    assert revision == search_revision()
    assert all(part is None or part.endswith("+00:00") for part in revision)


def test_every_change_the_answer_can_show_changes_both_alike(events):
    seen = {with_page()}

    def changed() -> None:
        assert with_page() == search_revision() not in seen
        seen.add(search_revision())

    events[2].title = "Renamed"
    events[2].save()
    changed()
    events[0].delete()  # not the newest change: its retired id tells
    changed()
    EventFactory(public_id="evt-rev-new", location="online")
    changed()
    with time_machine.travel(events[1].starts_at + timedelta(minutes=1)):
        changed()  # an event started: it left the upcoming ones


def test_a_registration_changes_neither(events):
    before = with_page()
    RegistrationFactory(event=events[0], user=UserFactory())
    assert with_page() == search_revision() == before


def test_an_empty_page_has_no_revision_and_other_searches_none(events):
    assert search_events(visitor=Visitor(), location="online", with_revision=True).revision is None
    assert search_events(visitor=Visitor(), location="taipei").revision is None
    assert (
        search_events(visitor=Visitor(), location="taipei", with_seats=True, with_revision=True).revision
        is None
    )
