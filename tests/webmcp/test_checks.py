"""System checks: each bad declaration is reported with its own id before the server starts."""

from __future__ import annotations

import pytest
from django.core import checks
from django_webmcp import registry as registry_module
from django_webmcp.checks import check_registry
from django_webmcp.registry import Binding, Exposure, Registry, ToolDeclaration
from rest_framework import serializers

from tests.webmcp.declarations import DETAIL, LIST, ItemRefInput, build_registry

pytestmark = pytest.mark.unit


class WithDate(serializers.Serializer):
    day = serializers.DateField()


class NoId(serializers.Serializer):
    note = serializers.CharField(required=False)


def declaration(**overrides) -> ToolDeclaration:
    fields = {
        "name": "read_item",
        "description": "Read one item.",
        "input_serializer": ItemRefInput,
        "endpoint": "api-get-event-details",
        "method": "GET",
        "route_param": "event_id",
        "exposures": (Exposure(LIST, Binding.INPUT), Exposure(DETAIL, Binding.ROUTE)),
    }
    return ToolDeclaration(**{**fields, **overrides})


def registry_with(*tools: ToolDeclaration) -> Registry:
    registry = Registry()
    for tool in tools:
        registry.register(tool)
    return registry


def ids_for(*tools: ToolDeclaration) -> list[str]:
    return [message.id for message in check_registry(registry_with(*tools))]


def test_a_good_registry_passes() -> None:
    assert check_registry(build_registry()) == []
    assert ids_for(declaration()) == []


@pytest.mark.parametrize(
    ("overrides", "check_id"),
    [
        ({"name": "read item"}, "webmcp.E001"),
        ({"name": ""}, "webmcp.E001"),
        ({"name": "x" * 129}, "webmcp.E001"),
        ({"exposures": (Exposure("no-such-page", Binding.INPUT),)}, "webmcp.E003"),
        ({"endpoint": "no-such-endpoint"}, "webmcp.E004"),
        ({"description": "   "}, "webmcp.E005"),
        ({"input_serializer": WithDate}, "webmcp.E006"),
        ({"exposures": (Exposure(LIST, Binding.INPUT, confirm=True),)}, "webmcp.E007"),
        ({"exposures": (Exposure(DETAIL, Binding.ROUTE, confirm=True),)}, "webmcp.E007"),
        ({"route_param": "", "endpoint": "api-search-events"}, "webmcp.E008"),
        ({"method": "PATCH"}, "webmcp.E009"),
        ({"method": "get"}, "webmcp.E009"),
        (
            {"exposures": (Exposure(DETAIL, Binding.ROUTE), Exposure(DETAIL, Binding.INPUT, when=bool))},
            "webmcp.E011",
        ),
        ({"exposures": (Exposure(LIST, Binding.ROUTE),)}, "webmcp.E012"),
        ({"endpoint": "api-search-events"}, "webmcp.E013"),
        ({"input_serializer": NoId, "exposures": (Exposure(LIST, Binding.INPUT),)}, "webmcp.E014"),
        ({"exposures": ()}, "webmcp.W001"),
    ],
)
def test_each_bad_declaration_fires_its_check(overrides: dict, check_id: str) -> None:
    assert check_id in ids_for(declaration(**overrides))


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_a_write_may_ask_the_person_to_confirm(method: str) -> None:
    write = declaration(
        method=method,
        endpoint="api-registration",
        exposures=(
            Exposure(DETAIL, Binding.ROUTE, when=bool, confirm=True),
            Exposure(DETAIL, Binding.ROUTE, when=lambda context: False),
            Exposure(LIST, Binding.INPUT, confirm=True),
        ),
    )
    assert ids_for(write) == []


def test_e007_names_the_route_of_the_read_that_asks_for_confirmation() -> None:
    read = declaration(
        exposures=(Exposure(LIST, Binding.INPUT), Exposure(DETAIL, Binding.ROUTE, confirm=True))
    )
    [message] = check_registry(registry_with(read))
    assert message.id == "webmcp.E007"
    assert message.obj == "WebMCP tool 'read_item'"
    assert "'event-detail'" in message.msg and "GET" in message.msg
    assert message.level == checks.ERROR


def test_checks_name_the_tool() -> None:
    [message] = check_registry(registry_with(declaration(method="PATCH")))
    assert message.obj == "WebMCP tool 'read_item'"
    assert "PATCH" in message.msg
    assert message.level == checks.ERROR


def test_a_registry_holding_two_tools_with_one_name_fires_e002() -> None:
    class Leaky(Registry):
        def tools(self) -> tuple[ToolDeclaration, ...]:
            return (declaration(), declaration(description="Again."))

    assert "webmcp.E002" in [message.id for message in check_registry(Leaky())]


def test_an_unknown_reason_override_fires_e015(settings) -> None:
    settings.WEBMCP_REASONS = {"unavailable": "X", "typo": "Y"}
    assert [message.id for message in check_registry(Registry())] == ["webmcp.E015"]


def test_the_registered_check_runs_on_the_default_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "registry", registry_with(declaration(method="PATCH")))
    ids = [message.id for message in checks.run_checks(tags=["webmcp"])]
    assert ids == ["webmcp.E009"]
