"""Template tags: the manifest, the catalogue meta tag, the runtime script and the form attributes."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

import pytest
from django.template import Context, Template
from django.test import RequestFactory

from tests.webmcp.declarations import LIST, build_registry
from tests.webmcp.helpers import page_request
from webmcp import registry as registry_module
from webmcp.registry import Binding, Exposure, Registry, ToolDeclaration

BREAKOUT = "</script><script>alert(1)</script>"


class Elements(HTMLParser):
    """Every element's tag, attributes and text, as a browser's tokenizer would split them."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[dict[str, Any]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append({"tag": tag, "attrs": dict(attrs), "text": ""})

    def handle_data(self, data: str) -> None:
        if self.elements:
            self.elements[-1]["text"] += data


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
    assert [(tool["name"], tool["binding"]) for tool in manifest["tools"]] == [
        ("join_item", "form"),
        ("read_item", "route"),
    ]
    assert manifest["tools"][1]["routeValues"] == {"event_id": "itm-a"}


def test_webmcp_tools_follows_the_state(registry: Registry) -> None:
    html = render("{% webmcp_tools %}", request=page_request("/events/itm-a/"))
    assert [tool["binding"] for tool in manifest_in(html)["tools"]] == ["route", "route"]


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


def form_attrs(tool_name: str, path: str, **state: Any) -> dict[str, str | None]:
    html = render(
        f'<form{{% webmcp_form_attrs "{tool_name}" %}}>', request=page_request(path), webmcp_state=state
    )
    [form] = Elements(html).elements
    return form["attrs"]


def test_webmcp_form_attrs_render_only_when_the_form_exposure_passes(registry: Registry) -> None:
    assert form_attrs("join_item", "/events/itm-a/", signed_in=True) == {
        "toolname": "join_item",
        "tooldescription": "Join the page's item; the person confirms.",
        "tooltitle": "Join this item",
    }
    assert form_attrs("join_item", "/events/itm-a/") == {}  # the route-bound exposure passes instead
    assert form_attrs("read_item", "/events/itm-a/") == {}  # not a form tool
    assert form_attrs("find_items", "/events/itm-a/") == {}  # not on this route
    assert form_attrs("no_such_tool", "/events/") == {}


def test_webmcp_form_attrs_mark_autosubmit(registry: Registry) -> None:
    assert form_attrs("find_items", "/events/") == {
        "toolname": "find_items",
        "tooldescription": "Find items by words.",
        "tooltitle": "Find items",
        "toolautosubmit": None,
    }


def test_webmcp_form_attrs_are_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = Registry()
    hostile.register(
        ToolDeclaration(
            name="find_items",
            title='"><script>alert(1)</script>',
            description='Find "things" & <stuff>',
            input_serializer=None,
            endpoint="api-search-events",
            method="GET",
            exposures=(Exposure(LIST, Binding.FORM),),
        )
    )
    monkeypatch.setattr(registry_module, "registry", hostile)
    html = render('<form{% webmcp_form_attrs "find_items" %}>', request=page_request("/events/"))
    assert "<script>" not in html
    [form] = Elements(html).elements
    assert form["attrs"]["tooldescription"] == 'Find "things" & <stuff>'
    assert form["attrs"]["tooltitle"] == '"><script>alert(1)</script>'


def test_webmcp_form_attrs_render_nothing_without_a_request(registry: Registry) -> None:
    assert render('{% webmcp_form_attrs "find_items" %}') == ""
