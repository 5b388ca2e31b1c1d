"""What the registry derives from a declaration: manifest entries, catalogue, fingerprint, annotations."""

from __future__ import annotations

from django.test import RequestFactory
from django.urls import resolve
from django_webmcp.registry import Binding, Exposure, Registry, ToolContext, ToolDeclaration, registry


def context(path: str, **state) -> ToolContext:
    request = RequestFactory().get(path)
    match = resolve(path)
    request.resolver_match = match
    return ToolContext(request=request, url_name=match.view_name, url_kwargs=match.kwargs, state=state)


def entry(path: str, name: str, **state) -> dict:
    tools = registry.manifest(context(path, **state))["tools"]
    return next(tool for tool in tools if tool["name"] == name)


def test_a_declared_output_reaches_the_manifest_and_the_catalogue():
    assert entry("/", "search_items")["outputSchema"] == {
        "type": "object",
        "properties": {"count": {"type": "integer"}},
    }
    catalogue = {tool["name"]: tool for tool in registry.catalogue()["tools"]}
    assert "outputSchema" in catalogue["get_item"]
    assert "outputSchema" not in catalogue["reserve_item"]


def test_a_registered_tools_output_schema_is_made_once_for_every_page():
    made: list[str] = []

    class Counted(ToolDeclaration):
        def output_schema(self):
            made.append(self.name)
            return super().output_schema()

    own = Registry()
    read = Counted(
        name="read_thing",
        description="Read it.",
        input_serializer=None,
        output_serializer={"type": "object", "properties": {"name": {"type": "string"}}},
        endpoint="api-search",
        method="GET",
        exposures=[Exposure("item-list", Binding.INPUT)],
        read_only=True,
    )
    own.register(read)
    entries = [own.manifest(context("/"))["tools"][0]["outputSchema"] for _ in range(3)]
    assert entries[0] == {"type": "object", "properties": {"name": {"type": "string"}}}
    assert own.catalogue()["tools"][0]["outputSchema"] == entries[0]
    assert made == ["read_thing"]
    # A declaration the registry does not hold (another with the same name) is not given its schema.
    other = Counted(**{**vars(read), "output_serializer": {"type": "object"}})
    assert own.output_schema_of(other) == {"type": "object"}


def test_a_route_bound_tool_takes_nothing_and_carries_the_pages_object():
    tool = entry("/items/itm-green/", "get_item")
    assert tool["inputSchema"] == {"type": "object", "properties": {}, "additionalProperties": False}
    assert tool["routeValues"] == {"item_id": "itm-green"}
    assert tool["endpoint"] == "/api/items/{item_id}"


def test_a_confirmed_write_is_offered_only_while_its_state_allows():
    assert entry("/items/itm-green/", "reserve_item", reservable=True)["confirm"] is True
    names = [tool["name"] for tool in registry.manifest(context("/items/itm-green/"))["tools"]]
    assert names == ["get_item"]


def test_annotations_are_the_true_hints_in_the_drafts_spelling():
    assert entry("/", "search_items")["annotations"] == {"readOnlyHint": True, "untrustedContentHint": True}
    assert entry("/", "dump_state")["annotations"] == {"readOnlyHint": True, "debugging": True}


def declaration(**changes) -> ToolDeclaration:
    fields = {
        "name": "x",
        "description": "X.",
        "input_serializer": None,
        "endpoint": "api-search",
        "method": "GET",
        "exposures": (Exposure("item-list", Binding.INPUT),),
    }
    return ToolDeclaration(**{**fields, **changes})


def fingerprint(*declarations: ToolDeclaration) -> str:
    built = Registry()
    for one in declarations:
        built.register(one)
    return built.fingerprint()


def test_the_fingerprint_follows_an_output_but_ignores_its_absence():
    """Tool sets without outputs keep the fingerprint they had before outputs existed."""
    bare = fingerprint(declaration())
    assert bare == fingerprint(declaration(output_serializer=None))
    assert bare != fingerprint(declaration(output_serializer={"type": "object"}))
    assert bare != fingerprint(declaration(debugging=True))


def test_a_declaration_with_a_dict_schema_stays_hashable():
    assert hash(declaration(input_serializer={"type": "object"}, output_serializer={"type": "object"}))
