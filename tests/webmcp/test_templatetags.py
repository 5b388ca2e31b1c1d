"""Template tags: the manifest, the catalogue meta tag, the runtime script and the confirm marker."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.template import Context, Template
from django.test import RequestFactory
from django_webmcp import registry as registry_module
from django_webmcp.registry import Binding, Exposure, Registry, ToolDeclaration

from tests.webmcp.declarations import LIST, build_registry
from tests.webmcp.helpers import BREAKOUT, Elements, page_request

pytestmark = pytest.mark.unit


def render(source: str, **context: Any) -> str:
    return Template("{% load webmcp %}" + source).render(Context(context))


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    test_registry = build_registry()
    monkeypatch.setattr(registry_module, "registry", test_registry)
    return test_registry


def manifest_in(html: str) -> dict[str, Any]:
    [script] = Elements(html).elements
    assert script["tag"] == "script"
    assert script["attrs"] == {"id": "webmcp-manifest", "type": "application/json"}
    return json.loads(script["text"])


def test_webmcp_tools_renders_the_manifest_of_the_request(registry: Registry) -> None:
    state = {"signed_in": True, "stateVersion": 7}
    html = render("{% webmcp_tools %}", request=page_request("/events/itm-a/"), webmcp_state=state)
    manifest = manifest_in(html)
    assert manifest["route"] == "event-detail"
    assert manifest["stateVersion"] == 7
    assert [(tool["name"], tool["binding"], tool.get("confirm")) for tool in manifest["tools"]] == [
        ("join_item", "route", True),
        ("read_item", "route", None),
    ]
    assert manifest["tools"][1]["routeValues"] == {"event_id": "itm-a"}
    assert set(manifest["texts"]) == {"confirm", "decline"}


def test_webmcp_tools_follows_the_state(registry: Registry) -> None:
    html = render("{% webmcp_tools %}", request=page_request("/events/itm-a/"))
    assert [(tool["binding"], tool.get("confirm")) for tool in manifest_in(html)["tools"]] == [
        ("route", None),
        ("route", None),
    ]


@pytest.mark.parametrize(
    "context",
    [
        {},
        {"request": RequestFactory().get("/somewhere")},  # no resolver match
        {"request": page_request("/health")},  # a route without tools
    ],
)
def test_webmcp_tools_renders_an_empty_list_where_there_is_nothing_to_offer(
    registry: Registry, context: dict[str, Any]
) -> None:
    assert manifest_in(render("{% webmcp_tools %}", **context))["tools"] == []


def test_webmcp_tools_cannot_be_broken_out_of(monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = Registry()
    hostile.register(
        ToolDeclaration(
            name="read_item",
            title=BREAKOUT,
            description=f"Reads {BREAKOUT} & more",
            input_serializer=None,
            endpoint="api-search-events",
            method="GET",
            exposures=(Exposure(LIST, Binding.INPUT),),
        )
    )
    monkeypatch.setattr(registry_module, "registry", hostile)
    html = render("{% webmcp_tools %}", request=page_request("/events/"), webmcp_state={"note": BREAKOUT})
    assert "</script><script>" not in html
    assert html.count("</script>") == 1
    [tool] = manifest_in(html)["tools"]
    assert tool["title"] == BREAKOUT
    assert tool["description"] == f"Reads {BREAKOUT} & more"


def test_webmcp_meta_carries_the_fingerprint(registry: Registry) -> None:
    [meta] = Elements(render("{% webmcp_meta %}")).elements
    assert meta == {
        "tag": "meta",
        "attrs": {"name": "webmcp-catalogue", "content": registry.fingerprint()},
        "text": "",
    }


def test_webmcp_runtime_loads_the_module_script() -> None:
    [script] = Elements(render("{% webmcp_runtime %}")).elements
    assert script["attrs"]["type"] == "module"
    assert script["attrs"]["src"].endswith("webmcp/webmcp.js")


def confirm_attrs(source: str, path: str | None, **state: Any) -> dict[str, str | None]:
    """The attributes of `<form{source}>` as a browser reads them, rendered for `path`."""
    context: dict[str, Any] = {"webmcp_state": state}
    if path is not None:
        context["request"] = page_request(path)
    html = render(f"<form{source}>", **context)
    [form] = Elements(html).elements
    return form["attrs"]


def test_webmcp_confirm_marks_the_form_when_the_confirm_exposure_passes(registry: Registry) -> None:
    tag = '{% webmcp_confirm "join_item" %}'
    assert confirm_attrs(tag, "/events/itm-a/", signed_in=True) == {"data-webmcp-confirm": "join_item"}


@pytest.mark.parametrize(
    ("tool_name", "path", "state"),
    [
        ("join_item", "/events/itm-a/", {}),  # the exposure that passes asks for no confirmation
        ("read_item", "/events/itm-a/", {"signed_in": True}),  # passes, but never asks
        ("leave_item", "/events/itm-a/", {"signed_in": True}),  # not offered on this route
        ("leave_item", "/events/", {}),  # its `when` fails
        ("no_such_tool", "/events/", {"signed_in": True}),
    ],
)
def test_webmcp_confirm_renders_nothing_unless_that_tool_asks_here(
    registry: Registry, tool_name: str, path: str, state: dict[str, Any]
) -> None:
    assert (
        render(f'{{% webmcp_confirm "{tool_name}" %}}', request=page_request(path), webmcp_state=state) == ""
    )


def test_webmcp_confirm_names_the_object_of_the_form(registry: Registry) -> None:
    """A list has one form per row: the values tell the runtime which row the agent's input names."""
    html = render(
        '<form{% webmcp_confirm "leave_item" event_id=item_id kind="b" %}>',
        request=page_request("/events/"),
        webmcp_state={"signed_in": True},
        item_id="itm-b",
    )
    [form] = Elements(html).elements
    assert form["attrs"]["data-webmcp-confirm"] == "leave_item"
    assert json.loads(form["attrs"]["data-webmcp-values"]) == {"event_id": "itm-b", "kind": "b"}


def test_webmcp_confirm_without_values_has_no_values_attribute(registry: Registry) -> None:
    html = render(
        '{% webmcp_confirm "leave_item" %}',
        request=page_request("/events/"),
        webmcp_state={"signed_in": True},
    )
    assert html == ' data-webmcp-confirm="leave_item"'


def test_webmcp_confirm_values_are_escaped(registry: Registry) -> None:
    hostile = f'it\'s "quoted" & {BREAKOUT}'
    html = render(
        '<form{% webmcp_confirm "leave_item" event_id=value %}><button>Leave</button></form>',
        request=page_request("/events/"),
        webmcp_state={"signed_in": True},
        value=hostile,
    )
    assert "<script>" not in html
    # The single-quoted attribute value holds no quote of either kind, nor a raw < or >.
    value = html.split("data-webmcp-values='", 1)[1].split("'", 1)[0]
    assert not set(value) & {'"', "<", ">"}
    form, button = Elements(html).elements
    assert button["tag"] == "button"  # nothing broke out of the form's start tag
    assert set(form["attrs"]) == {"data-webmcp-confirm", "data-webmcp-values"}
    assert json.loads(form["attrs"]["data-webmcp-values"]) == {"event_id": hostile}


def test_webmcp_confirm_escapes_the_tool_name(monkeypatch: pytest.MonkeyPatch) -> None:
    name = 'x" onclick="alert(1)'  # the checks refuse such a name; the tag must not trust them
    hostile = Registry()
    hostile.register(
        ToolDeclaration(
            name=name,
            description="Does something.",
            input_serializer=None,
            endpoint="api-search-events",
            method="POST",
            exposures=(Exposure(LIST, Binding.INPUT, confirm=True),),
        )
    )
    monkeypatch.setattr(registry_module, "registry", hostile)
    html = render("<form{% webmcp_confirm name %}>", request=page_request("/events/"), name=name)
    [form] = Elements(html).elements
    assert form["attrs"] == {"data-webmcp-confirm": name}


@pytest.mark.parametrize(
    "context",
    [
        {},
        {"request": RequestFactory().get("/events/")},  # no resolver match
    ],
)
def test_webmcp_confirm_renders_nothing_without_a_resolved_request(
    registry: Registry, context: dict[str, Any]
) -> None:
    html = render(
        '{% webmcp_confirm "join_item" event_id="itm-a" %}', webmcp_state={"signed_in": True}, **context
    )
    assert html == ""


def test_the_declarative_form_tag_is_gone() -> None:
    from django.template import TemplateSyntaxError

    with pytest.raises(TemplateSyntaxError):
        render('{% webmcp_form_attrs "find_items" %}')
