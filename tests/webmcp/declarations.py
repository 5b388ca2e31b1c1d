"""Test declarations for the webmcp layer: small serializers and a registry built like an app's.

They use URL names the project defines (so checks and templates resolve for real) but none of the
project's code: the webmcp layer is generic and is tested as such.
"""

from __future__ import annotations

from typing import Any

from django_webmcp.registry import Binding, Exposure, Registry, ToolContext, ToolDeclaration
from rest_framework import serializers

LIST, DETAIL = "event-list", "event-detail"


class ItemSearchInput(serializers.Serializer):
    query = serializers.CharField(required=False, allow_blank=True, max_length=100, help_text="Words.")
    kind = serializers.ChoiceField(choices=[("a", "A"), ("b", "B")], required=False)


class ItemSearchInputV2(serializers.Serializer):
    """ItemSearchInput with one field changed: the schema must follow."""

    query = serializers.CharField(required=False, allow_blank=True, max_length=50, help_text="Words.")
    kind = serializers.ChoiceField(choices=[("a", "A"), ("b", "B")], required=False)


class ItemRefInput(serializers.Serializer):
    event_id = serializers.RegexField(r"^itm-[a-z]+$", max_length=40, help_text="An item id.")


def signed_in(context: ToolContext) -> bool:
    return bool(context.state.get("signed_in"))


def anonymous(context: ToolContext) -> bool:
    return not context.state.get("signed_in")


def tool(name: str = "some_tool", **overrides: Any) -> ToolDeclaration:
    """A valid declaration to vary one field at a time."""
    fields: dict[str, Any] = {
        "name": name,
        "description": "Does something.",
        "input_serializer": ItemRefInput,
        "endpoint": "api-get-event-details",
        "method": "GET",
        "exposures": (Exposure(LIST, Binding.INPUT),),
    }
    return ToolDeclaration(**{**fields, **overrides})


def build_registry(*, search_serializer: type[serializers.Serializer] = ItemSearchInput) -> Registry:
    """A registry with each binding, with and without confirmation, built the same way every time."""
    registry = Registry()
    registry.register(
        ToolDeclaration(
            name="find_items",
            title="Find items",
            description="Find items by words.",
            input_serializer=search_serializer,
            endpoint="api-search-events",
            method="GET",
            exposures=(Exposure(LIST, Binding.INPUT),),
            read_only=True,
            untrusted_content=True,
        )
    )
    registry.register(
        ToolDeclaration(
            name="read_item",
            description="Read one item.",
            input_serializer=ItemRefInput,
            endpoint="api-get-event-details",
            method="GET",
            route_param="event_id",
            exposures=(Exposure(LIST, Binding.INPUT), Exposure(DETAIL, Binding.ROUTE)),
            read_only=True,
        )
    )
    registry.register(
        ToolDeclaration(
            name="join_item",
            title="Join this item",
            description="Join the page's item; the person confirms.",
            input_serializer=ItemRefInput,
            endpoint="api-registration",
            method="POST",
            route_param="event_id",
            exposures=(
                # The person presses the page's join button; an anonymous visitor's call is answered
                # at once (with "sign in first"), there is nothing to press.
                Exposure(DETAIL, Binding.ROUTE, when=signed_in, confirm=True),
                Exposure(DETAIL, Binding.ROUTE, when=anonymous),
            ),
            consequential=True,
        )
    )
    registry.register(
        ToolDeclaration(
            name="leave_item",
            description="Leave one of the items listed; the person confirms on that item's row.",
            input_serializer=ItemRefInput,
            endpoint="api-registration",
            method="DELETE",
            route_param="event_id",
            exposures=(Exposure(LIST, Binding.INPUT, when=signed_in, confirm=True),),
            consequential=True,
        )
    )
    return registry
