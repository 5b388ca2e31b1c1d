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
from django_webmcp import registry as registry_module
from django_webmcp.registry import (
    AmbiguousExposureError,
    Binding,
    DuplicateToolError,
    Exposure,
    Registry,
    ToolDeclaration,
    catalogue_fingerprint,
    runtime_answers,
)
from django_webmcp.routing import url_template

from tests.webmcp.declarations import DETAIL, LIST, ItemSearchInputV2, build_registry, tool
from tests.webmcp.helpers import page_context

pytestmark = pytest.mark.unit

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


def test_binding_has_no_declarative_form_any_more() -> None:
    assert [binding.value for binding in Binding] == ["input", "route"]


def test_an_exposure_asks_for_no_confirmation_unless_told() -> None:
    assert Exposure(LIST, Binding.INPUT).confirm is False
    assert Exposure(LIST, Binding.INPUT, confirm=True).confirm is True
    with pytest.raises(TypeError):
        Exposure(LIST, Binding.INPUT, autosubmit=True)  # type: ignore[call-arg]


def test_exposures_for_ignores_predicates() -> None:
    registry = build_registry()
    pairs = [(t.name, e.binding, e.confirm) for t, e in registry.exposures_for(DETAIL)]
    assert pairs == [
        ("join_item", Binding.ROUTE, True),
        ("join_item", Binding.ROUTE, False),
        ("read_item", Binding.ROUTE, False),
    ]


def test_active_exposures_follow_the_when_predicates() -> None:
    registry = build_registry()
    anonymous = registry.active_exposures(page_context("/events/itm-a/"))
    signed_in = registry.active_exposures(page_context("/events/itm-a/", signed_in=True))
    assert [(t.name, e.binding, e.confirm) for t, e in anonymous] == [
        ("join_item", Binding.ROUTE, False),
        ("read_item", Binding.ROUTE, False),
    ]
    assert [(t.name, e.binding, e.confirm) for t, e in signed_in] == [
        ("join_item", Binding.ROUTE, True),
        ("read_item", Binding.ROUTE, False),
    ]


def test_active_exposures_of_the_list_follow_the_state_too() -> None:
    registry = build_registry()
    anonymous = registry.active_exposures(page_context("/events/"))
    signed_in = registry.active_exposures(page_context("/events/", signed_in=True))
    assert [t.name for t, _ in anonymous] == ["find_items", "read_item"]
    assert [(t.name, e.binding, e.confirm) for t, e in signed_in] == [
        ("find_items", Binding.INPUT, False),
        ("leave_item", Binding.INPUT, True),
        ("read_item", Binding.INPUT, False),
    ]


def test_two_passing_exposures_of_one_tool_raise() -> None:
    registry = Registry()
    registry.register(
        tool(
            exposures=(
                Exposure(DETAIL, Binding.ROUTE, when=lambda context: True),
                Exposure(DETAIL, Binding.INPUT, when=lambda context: context.state.get("both", False)),
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
                # the first declared exposure (route-bound, with confirmation): it takes nothing
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
    assert [entry["name"] for entry in catalogue["tools"]] == ["find_items", "leave_item", "read_item"]
    find_items, leave_item, read_item = catalogue["tools"]
    assert find_items["inputSchema"]["properties"]["query"]["maxLength"] == 100
    assert find_items["annotations"] == {"readOnlyHint": True, "untrustedContentHint": True}
    assert read_item["inputSchema"]["required"] == ["event_id"]
    assert set(read_item) == {"name", "description", "inputSchema", "annotations"}
    # Confirmation is how the page runs a call, not part of the agent's contract.
    assert leave_item["inputSchema"]["required"] == ["event_id"]
    assert set(leave_item) == {"name", "description", "inputSchema", "annotations"}


def test_catalogue_without_a_route_lists_every_tool_with_its_full_input() -> None:
    catalogue = build_registry().catalogue()
    assert [entry["name"] for entry in catalogue["tools"]] == [
        "find_items",
        "join_item",
        "leave_item",
        "read_item",
    ]
    join_item = catalogue["tools"][1]
    assert join_item["inputSchema"]["required"] == ["event_id"]


# ---- schema per binding --------------------------------------------------------------------------


def test_schema_for_an_input_binding_is_the_full_input_route_param_included() -> None:
    read_item = build_registry().get("read_item")
    schema = read_item.schema_for(Binding.INPUT)
    assert schema == read_item.input_schema()
    assert schema["required"] == ["event_id"]
    assert schema["additionalProperties"] is False


def test_schema_for_a_route_binding_takes_nothing() -> None:
    assert build_registry().get("join_item").schema_for(Binding.ROUTE) == EMPTY


# ---- describe ------------------------------------------------------------------------------------


def test_describe_lists_each_exposure_with_its_confirm_flag() -> None:
    [join_item] = [t for t in build_registry().describe()["tools"] if t["name"] == "join_item"]
    exposures = join_item["exposures"]
    assert sorted((e["route"], e["binding"], e["confirm"], e["conditional"]) for e in exposures) == [
        (DETAIL, "route", False, True),
        (DETAIL, "route", True, True),
    ]
    for exposure in exposures:
        assert set(exposure) == {"route", "binding", "confirm", "conditional", "inputSchema"}
        assert exposure["inputSchema"] == EMPTY


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


def test_fingerprint_changes_when_an_exposure_starts_asking_for_confirmation() -> None:
    def registry(confirm: bool) -> Registry:
        reg = Registry()
        reg.register(
            tool(
                method="POST",
                endpoint="api-registration",
                route_param="event_id",
                exposures=(Exposure(DETAIL, Binding.ROUTE, confirm=confirm),),
            )
        )
        return reg

    assert registry(True).fingerprint() != registry(False).fingerprint()
    assert registry(True).fingerprint() == registry(True).fingerprint()


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


@pytest.mark.slow  # starts a process or a server
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


REASONS = {
    "unavailable": "SERVICE_UNAVAILABLE",
    "routeMismatch": "ROUTE_OBJECT_MISMATCH",
    "declined": "FORM_RESET",
    "notOnPage": "NOT_ON_THIS_PAGE",
    "busy": "CONFIRMATION_PENDING",
}
TEXTS = {
    "confirm": "An assistant asks to do this for you. Press the button to confirm.",
    "decline": "Not now",
}


def test_manifest_for_an_anonymous_visitor_on_a_detail_page() -> None:
    registry = build_registry()
    with translation.override("en"):
        manifest = registry.manifest(page_context("/events/itm-a/", stateVersion=4))
    assert manifest == {
        "fingerprint": registry.fingerprint(),
        "route": DETAIL,
        "stateVersion": 4,
        "answers": runtime_answers(),
        "texts": TEXTS,
        "tools": [
            {
                # the route-bound exposure without confirmation: nothing for the person to press
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


def test_manifest_marks_the_tool_the_person_confirms() -> None:
    registry = build_registry()
    manifest = registry.manifest(page_context("/events/itm-a/", signed_in=True))
    join_item, read_item = manifest["tools"]
    assert manifest["stateVersion"] == 0
    assert join_item == {
        "name": "join_item",
        "title": "Join this item",
        "description": "Join the page's item; the person confirms.",
        "inputSchema": EMPTY,
        "annotations": {"consequentialHint": True},
        "binding": "route",
        "method": "POST",
        "endpoint": "/api/events/{event_id}/registration",
        "routeValues": {"event_id": "itm-a"},
        "confirm": True,
    }
    assert "confirm" not in read_item  # only set when true
    assert "autosubmit" not in json.dumps(manifest)


def test_manifest_of_the_list_page() -> None:
    manifest = build_registry().manifest(page_context("/events/", signed_in=True))
    find_items, leave_item, read_item = manifest["tools"]
    assert find_items["binding"] == "input"
    assert find_items["method"] == "GET"
    assert find_items["endpoint"] == "/api/events"
    assert find_items["inputSchema"]["properties"]["kind"] == {"type": "string", "enum": ["a", "b"]}
    assert "routeValues" not in find_items and "confirm" not in find_items
    # an input-bound tool that needs the person's press: its id comes from the input, not the page
    assert leave_item["binding"] == "input"
    assert leave_item["method"] == "DELETE"
    assert leave_item["endpoint"] == "/api/events/{event_id}/registration"
    assert leave_item["inputSchema"]["required"] == ["event_id"]
    assert leave_item["confirm"] is True
    assert "routeValues" not in leave_item
    assert read_item["binding"] == "input"
    assert read_item["inputSchema"]["required"] == ["event_id"]
    assert "routeValues" not in read_item and "confirm" not in read_item


def test_manifest_answers_use_the_project_spelling_of_reasons(settings) -> None:
    settings.WEBMCP_REASONS = {"routeMismatch": "CURRENT_THING_MISMATCH", "declined": "USER_CANCELLED"}
    answers = build_registry().manifest(page_context("/events/"))["answers"]
    reasons = {key: answer["reason"] for key, answer in answers.items()}
    assert reasons == {
        "unavailable": REASONS["unavailable"],
        "responseLost": "RESPONSE_LOST",
        "notAnObject": "VALIDATION_ERROR",
        "invalidInput": "VALIDATION_ERROR",
        "routeMismatch": "CURRENT_THING_MISMATCH",
        "notOnPage": REASONS["notOnPage"],
        "busy": REASONS["busy"],
        "declined": "USER_CANCELLED",
    }


def test_every_runtime_answer_is_a_whole_envelope_and_only_temporary_failures_are_retryable() -> None:
    for key, answer in runtime_answers().items():
        assert set(answer) == {"code", "reason", "retryable", "message", "nextAction"}, key
        assert answer["message"] and answer["nextAction"], key
        assert answer["retryable"] == (answer["code"] == "TEMPORARY_FAILURE"), key


def test_manifest_texts_are_plain_strings_for_the_person() -> None:
    with translation.override("en"):
        texts = build_registry().manifest(page_context("/events/"))["texts"]
    assert texts == TEXTS
    assert all(type(text) is str for text in texts.values())  # not lazy proxies


def test_manifest_texts_are_translated_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    # A string Django's own catalogue translates, so the test does not depend on ours being compiled.
    monkeypatch.setitem(registry_module.DEFAULT_TEXTS, "decline", gettext_lazy("Page not found"))
    registry = build_registry()
    with translation.override("en"):
        in_english = registry.manifest(page_context("/events/"))["texts"]["decline"]
    with translation.override("zh-hant"):
        in_chinese = registry.manifest(page_context("/events/"))["texts"]["decline"]
    assert in_english == "Page not found"
    assert in_chinese not in ("", "Page not found")


def test_manifest_texts_do_not_change_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    before = build_registry().fingerprint()
    monkeypatch.setitem(registry_module.DEFAULT_TEXTS, "decline", "Maybe later")
    assert build_registry().fingerprint() == before
