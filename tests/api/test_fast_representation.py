"""The search answer is built directly rather than field by field (a fifth of an API search's time,
bench/profiles/README.md). These tests hold the direct build equal to DRF's generic representation of
the same declared fields, so the OpenAPI document, which is generated from the declarations, keeps
describing what is sent."""

from datetime import timedelta

import pytest
from django.urls import get_script_prefix, set_script_prefix
from django.utils import timezone
from rest_framework import serializers

from core.visitors import Visitor
from events import selectors
from events.contract import EventSummarySerializer, SearchOutput
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def generic(serializer: serializers.Serializer, instance) -> dict:
    """What DRF would send for `instance` from the serializer's declared fields alone."""
    return dict(serializers.Serializer.to_representation(serializer, instance))


def test_an_event_summary_is_the_generic_representation_of_its_fields():
    event = EventFactory(
        public_id="evt-fast-1",
        title="工作坊 “quotes” & <tags>\u2028",
        summary="Line\nbreak",
        starts_at=timezone.now() + timedelta(days=3, minutes=7),
    )
    serializer = EventSummarySerializer()

    assert serializer.to_representation(event) == generic(serializer, event)
    assert list(serializer.to_representation(event)) == list(serializer.fields)


@pytest.mark.parametrize(
    "conditions",
    [{}, {"location": "taipei", "level": "beginner"}, {"query": "nothing-matches-this"}],
    ids=["any", "filters", "no match"],
)
def test_a_search_answer_is_the_generic_representation_with_its_zero_result_fields(conditions):
    EventFactory.create_batch(3)
    result = selectors.search_events(visitor=Visitor(), **conditions)
    serializer = SearchOutput(result, context={"state_version": 7})

    body = serializer.data
    expected = generic(serializer, result)
    if result.total == 0:
        expected.update(
            constraintsRelaxed=False,
            requiresUserDecision=True,
            nextAction=body["nextAction"],
        )
    assert body == expected
    assert list(body) == list(expected)
    assert body["stateVersion"] == 7
    assert (body["count"], body["total"]) == ((3, 3) if result.total else (0, 0))


@pytest.mark.parametrize("prefix", ["/", "/sub/"])
def test_an_event_summary_url_follows_the_script_prefix(prefix):
    """The URL around the id is worked out once per prefix and URLconf: behind a proxy's path the
    same process answers with that path, as DRF's field would."""
    event = EventFactory(public_id="evt-fast-prefix")
    serializer = EventSummarySerializer()
    before = get_script_prefix()
    set_script_prefix(prefix)
    try:
        assert serializer.to_representation(event) == generic(serializer, event)
        assert serializer.to_representation(event)["url"].startswith(prefix.rstrip("/") + "/events/")
    finally:
        set_script_prefix(before)
