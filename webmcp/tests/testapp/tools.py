"""The test app's tools: from a Django form, from plain JSON Schema, and (with DRF) from serializers."""

from __future__ import annotations

from django_webmcp.registry import Binding, Exposure, ToolContext, ToolDeclaration, registry

from .forms import SearchForm

ITEM_OUTPUT = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "kind": {"type": "string"}},
}


def reservable(context: ToolContext) -> bool:
    return bool(context.state.get("reservable"))


registry.register(
    ToolDeclaration(
        name="search_items",
        title="Search items",
        description="Search the shop's items by words and kind. Read-only.",
        input_serializer=SearchForm,
        output_serializer={"type": "object", "properties": {"count": {"type": "integer"}}},
        endpoint="api-search",
        method="GET",
        exposures=(Exposure("item-list", Binding.INPUT),),
        read_only=True,
        untrusted_content=True,
    )
)
registry.register(
    ToolDeclaration(
        name="get_item",
        description="Describe one item. On an item's page it takes no input.",
        input_serializer={
            "type": "object",
            "properties": {"item_id": {"type": "string", "pattern": "^itm-[a-z]+$"}},
            "required": ["item_id"],
            "additionalProperties": False,
        },
        output_serializer=ITEM_OUTPUT,
        endpoint="api-item",
        method="GET",
        route_param="item_id",
        exposures=(Exposure("item-list", Binding.INPUT), Exposure("item-detail", Binding.ROUTE)),
        read_only=True,
        untrusted_content=True,
        auth_scope="items:read",
    )
)
registry.register(
    ToolDeclaration(
        name="reserve_item",
        description="Reserve the item of this page for the person. The person confirms each call.",
        input_serializer=None,
        endpoint="reserve",
        method="POST",
        route_param="item_id",
        exposures=(Exposure("item-detail", Binding.ROUTE, when=reservable, confirm=True),),
        consequential=True,
        auth_scope="items:write",
        auth_required=True,
    )
)
registry.register(
    ToolDeclaration(
        name="dump_state",
        description="Show the page's WebMCP state, for the page's developers.",
        input_serializer=None,
        endpoint="api-search",
        method="GET",
        exposures=(Exposure("item-list", Binding.INPUT),),
        read_only=True,
        debugging=True,
    )
)

try:
    from rest_framework import serializers
except ImportError:  # the settings projects without DRF
    serializers = None  # type: ignore[assignment]

if serializers is not None:

    class LookupInput(serializers.Serializer):
        name = serializers.CharField(max_length=30, help_text="The item's name.")

    class LookupOutput(serializers.Serializer):
        id = serializers.CharField()
        name = serializers.CharField()
        price = serializers.DecimalField(max_digits=6, decimal_places=2)
        tags = serializers.ListField(child=serializers.CharField())
        updated = serializers.DateTimeField(allow_null=True)

    registry.register(
        ToolDeclaration(
            name="lookup_item",
            description="Find an item by its exact name.",
            input_serializer=LookupInput,
            output_serializer=LookupOutput,
            endpoint="api-search",
            method="GET",
            exposures=(Exposure("item-list", Binding.INPUT),),
            read_only=True,
        )
    )
