"""The registry: registration, per-route exposure, catalogue, fingerprint and manifest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import NoReverseMatch
from django.utils import translation
from django.utils.translation import gettext_lazy

from tests.webmcp.declarations import DETAIL, LIST, ItemSearchInputV2, build_registry, tool
from tests.webmcp.helpers import page_context
from webmcp import registry as registry_module
from webmcp.registry import (
    AmbiguousExposureError,
    Binding,
    DuplicateToolError,
    Exposure,
    Registry,
    ToolDeclaration,
    catalogue_fingerprint,
)
from webmcp.routing import url_template

EMPTY = {"type": "object", "properties": {}, "additionalProperties": False}


def test_register_refuses_a_duplicate_name_at_once() -> None:
    registry = Registry()
    registry.register(tool("read"))
    with pytest.raises(DuplicateToolError, match="'read'"):
        registry.register(tool("read", description="Another."))
    assert [t.description for t in registry.tools()] == ["Does something."]


def test_tools_are_sorted_by_name_and_exposures_are_kept_immutable() -> None:
    registry = Registry()
    registry.register(tool("b_tool", exposures=[Exposure(LIST, Binding.INPUT)]))
    registry.register(tool("a_tool"))
    assert [t.name for t in registry.tools()] == ["a_tool", "b_tool"]
    assert isinstance(registry.get("b_tool").exposures, tuple)


def test_annotations_use_the_browser_names_and_only_true_ones() -> None:
    assert tool().annotations == {}
    assert tool(read_only=True, untrusted_content=True, consequential=True).annotations == {
        "readOnlyHint": True,
        "untrustedContentHint": True,
        "consequentialHint": True,
    }


def test_exposures_for_ignores_predicates() -> None:
    registry = build_registry()
    pairs = [(t.name, e.binding) for t, e in registry.exposures_for(DETAIL)]
    assert pairs == [("join_item", Binding.FORM), ("join_item", Binding.ROUTE), ("read_item", Binding.ROUTE)]


def test_active_exposures_follow_the_when_predicates() -> None:
    registry = build_registry()
    anonymous = registry.active_exposures(page_context("/events/itm-a/"))
    signed_in = registry.active_exposures(page_context("/events/itm-a/", signed_in=True))
    assert [(t.name, e.binding) for t, e in anonymous] == [
        ("join_item", Binding.ROUTE),
        ("read_item", Binding.ROUTE),
    ]
    assert [(t.name, e.binding) for t, e in signed_in] == [
        ("join_item", Binding.FORM),
        ("read_item", Binding.ROUTE),
    ]


def test_two_passing_exposures_of_one_tool_raise() -> None:
    registry = Registry()
    registry.register(
        tool(
            exposures=(
                Exposure(DETAIL, Binding.ROUTE, when=lambda context: True),
                Exposure(DETAIL, Binding.FORM, when=lambda context: context.state.get("both", False)),
            ),
            route_param="event_id",
        )
    )
    assert len(registry.active_exposures(page_context("/events/itm-a/"))) == 1
    with pytest.raises(AmbiguousExposureError, match="some_tool"):
        registry.active_exposures(page_context("/events/itm-a/", both=True))


# ---- catalogue -----------------------------------------------------------------------------------


def test_catalogue_of_a_route_lists_every_tool_that_can_appear_there() -> None:
    catalogue = build_registry().catalogue(DETAIL)
    assert catalogue == {
        "tools": [
            {
                "name": "join_item",
                "description": "Join the page's item; the person confirms.",
                # the first declared exposure (the form); its route_param comes from the page
                "inputSchema": EMPTY,
                "annotations": {"consequentialHint": True},
            },
            {
                "name": "read_item",
                "description": "Read one item.",
                "inputSchema": EMPTY,
                "annotations": {"readOnlyHint": True},
            },
        ]
    }


def test_catalogue_of_the_list_route_uses_the_serializer_schemas() -> None:
    catalogue = build_registry().catalogue(LIST)
    assert [entry["name"] for entry in catalogue["tools"]] == ["find_items", "read_item"]
    find_items, read_item = catalogue["tools"]
    assert find_items["inputSchema"]["properties"]["query"]["maxLength"] == 100
    assert find_items["annotations"] == {"readOnlyHint": True, "untrustedContentHint": True}
    assert read_item["inputSchema"]["required"] == ["event_id"]
    assert set(read_item) == {"name", "description", "inputSchema", "annotations"}


def test_catalogue_without_a_route_lists_every_tool_with_its_full_input() -> None:
    catalogue = build_registry().catalogue()
    assert [entry["name"] for entry in catalogue["tools"]] == ["find_items", "join_item", "read_item"]
    join_item = catalogue["tools"][1]
    assert join_item["inputSchema"]["required"] == ["event_id"]


def test_catalogue_of_a_route_without_tools_is_empty() -> None:
    assert build_registry().catalogue("health") == {"tools": []}


# ---- fingerprint ---------------------------------------------------------------------------------


def test_fingerprint_is_the_same_for_registries_built_the_same_way() -> None:
    first, second = build_registry().fingerprint(), build_registry().fingerprint()
    assert first == second
    assert first.startswith("sha256:")
    assert len(first) == len("sha256:") + 64


def test_fingerprint_changes_with_a_description_a_serializer_or_an_exposure() -> None:
    base = build_registry().fingerprint()
    changed_serializer = build_registry(search_serializer=ItemSearchInputV2).fingerprint()
    other_description = Registry()
    other_exposure = Registry()
    for declaration in build_registry().tools():
        if declaration.name == "read_item":
            other_description.register(ToolDeclaration(**{**vars(declaration), "description": "Read it."}))
            other_exposure.register(
                ToolDeclaration(**{**vars(declaration), "exposures": declaration.exposures[:1]})
            )
        else:
            other_description.register(declaration)
            other_exposure.register(declaration)
    assert len({base, changed_serializer, other_description.fingerprint(), other_exposure.fingerprint()}) == 4


def test_fingerprint_is_cached_until_a_tool_is_registered() -> None:
    registry = build_registry()
    before = registry.fingerprint()
    assert registry.fingerprint() is before
    registry.register(tool("another"))
    assert registry.fingerprint() != before


def test_fingerprint_does_not_depend_on_the_active_language() -> None:
    def registry() -> Registry:
        reg = Registry()
        reg.register(tool(description=gettext_lazy("Page not found")))
        return reg

    with translation.override("zh-hant"):
        in_chinese = registry().fingerprint()
    with translation.override("en"):
        in_english = registry().fingerprint()
    assert in_chinese == in_english


def test_fingerprint_is_stable_across_processes() -> None:
    code = (
        "import django; django.setup();"
        "from tests.webmcp.declarations import build_registry;"
        "print(build_registry().fingerprint())"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(settings.BASE_DIR),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == build_registry().fingerprint()


def test_catalogue_fingerprint_is_the_default_registry_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    test_registry = build_registry()
    monkeypatch.setattr(registry_module, "registry", test_registry)
    assert catalogue_fingerprint() == test_registry.fingerprint()


# ---- endpoint templates and manifests ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url_name", "template"),
    [
        ("api-search-events", "/api/events"),
        ("api-get-event-details", "/api/events/{event_id}"),
        ("api-save-event", "/api/me/saved/{event_id}"),
        ("api-registration", "/api/events/{event_id}/registration"),
    ],
)
def test_url_template_shows_each_kwarg_in_braces(url_name: str, template: str) -> None:
    assert url_template(url_name) == template


@pytest.mark.urls("tests.webmcp.urls")
def test_url_template_handles_typed_converters_and_namespaces() -> None:
    assert url_template("typed") == "/things/{pk}/parts/{part}/{ref}"
    assert url_template("shop:thing") == "/shop/things/{pk}"


def test_url_template_of_an_unknown_name_raises() -> None:
    with pytest.raises(NoReverseMatch):
        url_template("no-such-url")


def test_manifest_for_an_anonymous_visitor_on_a_detail_page() -> None:
    registry = build_registry()
    manifest = registry.manifest(page_context("/events/itm-a/", stateVersion=4))
    assert manifest == {
        "fingerprint": registry.fingerprint(),
        "route": DETAIL,
        "stateVersion": 4,
        "reasons": {"unavailable": "SERVICE_UNAVAILABLE", "routeMismatch": "ROUTE_OBJECT_MISMATCH"},
        "tools": [
            {
                "name": "join_item",
                "title": "Join this item",
                "description": "Join the page's item; the person confirms.",
                "inputSchema": EMPTY,
                "annotations": {"consequentialHint": True},
                "binding": "route",
                "method": "POST",
                "endpoint": "/api/events/{event_id}/registration",
                "routeValues": {"event_id": "itm-a"},
            },
            {
                "name": "read_item",
                "description": "Read one item.",
                "inputSchema": EMPTY,
                "annotations": {"readOnlyHint": True},
                "binding": "route",
                "method": "GET",
                "endpoint": "/api/events/{event_id}",
                "routeValues": {"event_id": "itm-a"},
            },
        ],
    }
    json.dumps(manifest)  # plain JSON all the way down


def test_manifest_follows_the_page_state() -> None:
    registry = build_registry()
    manifest = registry.manifest(page_context("/events/itm-a/", signed_in=True))
    join_item = manifest["tools"][0]
    assert manifest["stateVersion"] == 0
    assert join_item["binding"] == "form"
    assert join_item["autosubmit"] is False
    assert join_item["routeValues"] == {"event_id": "itm-a"}  # the endpoint needs it, the form lacks it


def test_manifest_of_the_list_page() -> None:
    manifest = build_registry().manifest(page_context("/events/"))
    find_items, read_item = manifest["tools"]
    assert find_items["binding"] == "form"
    assert find_items["autosubmit"] is True
    assert find_items["endpoint"] == "/api/events"
    assert "routeValues" not in find_items
    assert read_item["binding"] == "input"
    assert read_item["inputSchema"]["required"] == ["event_id"]
    assert "routeValues" not in read_item and "autosubmit" not in read_item


def test_manifest_reasons_follow_the_project_setting(settings) -> None:
    settings.WEBMCP_REASONS = {"routeMismatch": "CURRENT_THING_MISMATCH"}
    manifest = build_registry().manifest(page_context("/events/"))
    assert manifest["reasons"] == {
        "unavailable": "SERVICE_UNAVAILABLE",
        "routeMismatch": "CURRENT_THING_MISMATCH",
    }
