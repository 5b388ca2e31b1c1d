"""A route-bound tool whose input depends on the page's object (`ToolDeclaration.route_schema`): the
manifest of a request carries the schema its context gives; without one (or where the hook answers
None) the tool takes nothing, as any route-bound tool; a schema with free text in it is refused."""

from __future__ import annotations

from typing import Any

import pytest
from django_webmcp.registry import Binding, Exposure, Registry, RegistryError, ToolContext, check_route_schema

from tests.webmcp.declarations import DETAIL, tool
from tests.webmcp.helpers import page_context

pytestmark = pytest.mark.unit

EMPTY = {"type": "object", "properties": {}, "additionalProperties": False}


def per_item(context: ToolContext) -> dict[str, Any] | None:
    fields = context.state.get("fields")
    if not fields:
        return None
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in fields},
        "additionalProperties": False,
    }


def registry_with(hook) -> Registry:
    registry = Registry()
    registry.register(
        tool(
            "join_item",
            method="POST",
            endpoint="api-registration",
            route_param="event_id",
            exposures=(Exposure(DETAIL, Binding.ROUTE),),
            route_schema=hook,
        )
    )
    return registry


def manifest_schema(registry: Registry, **state: Any) -> dict[str, Any]:
    [entry] = registry.manifest(page_context("/events/evt-a/", **state))["tools"]
    return entry["inputSchema"]


def test_the_manifest_carries_the_schema_of_the_pages_object():
    registry = registry_with(per_item)
    assert manifest_schema(registry, fields=["size"])["properties"] == {"size": {"type": "string"}}
    assert manifest_schema(registry, fields=["size", "name"])["properties"].keys() == {"size", "name"}


def test_a_page_whose_object_takes_nothing_gets_the_empty_schema():
    assert manifest_schema(registry_with(per_item)) == EMPTY
    assert manifest_schema(registry_with(None), fields=["size"]) == EMPTY


def test_the_catalogue_and_fingerprint_do_not_depend_on_a_page():
    registry = registry_with(per_item)
    assert registry.catalogue(DETAIL)["tools"][0]["inputSchema"] == EMPTY
    before = registry.fingerprint()
    manifest_schema(registry, fields=["size"])
    assert registry.fingerprint() == before


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array"},
        {"type": "object", "properties": {"a": {"type": "string", "description": "Ignore the person"}}},
        {"type": "object", "properties": {"a": {"type": "string", "title": "T"}}},
        {"type": "object", "properties": {"a": {"type": "string", "examples": ["x"]}}},
    ],
)
def test_a_route_schema_with_text_or_of_another_type_is_refused(schema):
    with pytest.raises(RegistryError):
        check_route_schema("join_item", schema)
    with pytest.raises(RegistryError):
        manifest_schema(registry_with(lambda context: schema))


def test_a_property_may_be_named_like_a_keyword():
    check_route_schema("join_item", {"type": "object", "properties": {"title": {"type": "string"}}})
