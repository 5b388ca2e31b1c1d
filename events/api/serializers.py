"""Input and output serializers (layer 3).

Each input serializer is the only source of its validation: the API validates with it, the search
form is built from it, and the WebMCP tool schemas are generated from it.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from events.choices import Level, Location, Price
from events.models import PUBLIC_ID_PATTERN, Event, Registration
from events.selectors import MAX_PAGE_SIZE, QUERY_MAX_LENGTH


class EventSearchInput(serializers.Serializer):
    """Search conditions; all optional, combined with AND, never relaxed."""

    query = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=QUERY_MAX_LENGTH,
        help_text="Keyword matched in public event titles or summaries (case-insensitive).",
    )
    # An empty value means "any", as the person's form sends it; it is never a filter.
    location = serializers.ChoiceField(
        choices=Location.choices,
        required=False,
        allow_blank=True,
        help_text="Where the event takes place; empty for any.",
    )
    price = serializers.ChoiceField(
        choices=Price.choices, required=False, allow_blank=True, help_text="Free or paid; empty for any."
    )
    level = serializers.ChoiceField(
        choices=Level.choices, required=False, allow_blank=True, help_text="Audience level; empty for any."
    )


class EventSearchPageInput(EventSearchInput):
    """The API's search input: the search conditions plus a page window."""

    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_PAGE_SIZE, default=10)
    offset = serializers.IntegerField(required=False, min_value=0, default=0)


class EventRefInput(serializers.Serializer):
    """Names one event by its opaque public id (as returned by search)."""

    event_id = serializers.RegexField(
        PUBLIC_ID_PATTERN,
        max_length=80,
        help_text="The event's id exactly as returned by search_events, e.g. evt-webmcp-intro.",
    )


class NoInput(serializers.Serializer):
    """For endpoints that take no parameters: anything given is an unknown parameter."""


def _iso(value) -> str:
    from django.utils import timezone

    return timezone.localtime(value).isoformat()


class EventSummarySerializer(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    url = serializers.SerializerMethodField()
    title = serializers.CharField()
    summary = serializers.CharField()
    startsAt = serializers.SerializerMethodField()
    location = serializers.CharField()
    price = serializers.CharField()
    level = serializers.CharField()

    def get_url(self, event: Event) -> str:
        return reverse("event-detail", kwargs={"event_id": event.public_id})

    def get_startsAt(self, event: Event) -> str:
        return _iso(event.starts_at)


class EventDetailSerializer(EventSummarySerializer):
    """Everything public about an event. Optional values are left out when absent."""

    description = serializers.CharField()
    endsAt = serializers.SerializerMethodField()
    venue = serializers.CharField()
    status = serializers.CharField()
    priceAmount = serializers.IntegerField(source="price_amount", required=False)
    currency = serializers.CharField(required=False)
    capacity = serializers.IntegerField(required=False)
    seatsLeft = serializers.IntegerField(source="seats_left", required=False)
    isFull = serializers.BooleanField(source="is_full")
    registrationOpen = serializers.BooleanField(source="registration_open")

    def get_endsAt(self, event: Event) -> str:
        return _iso(event.ends_at)

    def to_representation(self, event: Event) -> dict[str, Any]:
        data = super().to_representation(event)
        if event.price_amount is None:
            data.pop("priceAmount", None)
            data.pop("currency", None)
        if event.capacity is None:
            data.pop("capacity", None)
            data.pop("seatsLeft", None)
        return data


class RegistrationSerializer(serializers.Serializer):
    eventId = serializers.CharField(source="event.public_id")
    status = serializers.CharField()
    updatedAt = serializers.SerializerMethodField()

    def get_updatedAt(self, registration: Registration) -> str:
        return _iso(registration.updated_at)


class RegistrationWithEventSerializer(RegistrationSerializer):
    event = EventSummarySerializer()


ZERO_RESULT_NEXT_ACTION = (
    "No event matches all of these conditions. Tell the person, and ask which condition to change "
    "before searching again; do not drop or change a filter on your own."
)


def search_payload(result, *, state_version: int) -> dict[str, Any]:
    """The search result body shared by the API and the search tool."""
    body: dict[str, Any] = {
        "ok": True,
        "count": result.count,
        "total": result.total,
        "limit": result.limit,
        "offset": result.offset,
        "events": EventSummarySerializer(result.events, many=True).data,
        "appliedFilters": result.applied_filters,
        "uiUpdated": False,
        "stateVersion": state_version,
    }
    if result.total == 0:
        body.update(constraintsRelaxed=False, requiresUserDecision=True, nextAction=ZERO_RESULT_NEXT_ACTION)
    return body


# Success bodies: one builder per use case, shared by the API views and the page routes that answer
# tool calls, so an agent gets the same body whichever path its call took.


def event_details_payload(details, *, state_version: int) -> dict[str, Any]:
    return {
        "ok": True,
        "event": EventDetailSerializer(details.event).data,
        "saved": details.is_saved,
        "registered": details.is_registered,
        "uiUpdated": False,
        "stateVersion": state_version,
    }


def save_payload(result) -> dict[str, Any]:
    return {
        "ok": True,
        "eventId": result.event.public_id,
        "saved": True,
        "alreadySaved": result.already_saved,
        "uiUpdated": False,
        "stateVersion": result.state_version,
    }


def unsave_payload(result) -> dict[str, Any]:
    return {
        "ok": True,
        "eventId": result.event.public_id,
        "saved": False,
        "wasSaved": result.was_saved,
        "uiUpdated": False,
        "stateVersion": result.state_version,
    }


def registration_payload(result) -> dict[str, Any]:
    return {
        "ok": True,
        "registration": RegistrationSerializer(result.registration).data,
        "alreadyRegistered": result.already_registered,
        "uiUpdated": False,
        "stateVersion": result.state_version,
    }


def cancel_payload(result) -> dict[str, Any]:
    return {
        "ok": True,
        "registration": RegistrationSerializer(result.registration).data,
        "alreadyCancelled": result.already_cancelled,
        "uiUpdated": False,
        "stateVersion": result.state_version,
    }
