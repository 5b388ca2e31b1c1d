"""System checks for tool declarations: a broken declaration stops `manage.py check`, not a browser.

Chromium rejects a bad tool at registration time, in the visitor's browser, where nobody sees the
error. These checks find the same mistakes (and the ones only the server can see, such as a URL name
that does not exist) before the server starts. The logic takes any registry so tests can build bad
declarations in a fresh one; the registered check runs it on the default registry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning

from django_webmcp import registry as registry_module
from django_webmcp.conf import DEFAULTS
from django_webmcp.headers import InvalidAllowlist, permissions_policy
from django_webmcp.registry import (
    DEFAULT_REASONS,
    METHODS,
    TOOL_NAME_PATTERN,
    Binding,
    Exposure,
    Registry,
    ToolDeclaration,
)
from django_webmcp.routing import url_parameter_sets, url_parameters
from django_webmcp.schema import SchemaGenerationError


def check_registry(registry: Registry) -> list[CheckMessage]:
    """Every problem in `registry`, as Django check messages (ids webmcp.E001…, webmcp.W001)."""
    messages: list[CheckMessage] = []
    counts = Counter(tool.name for tool in registry.tools())
    for name, count in sorted(counts.items()):
        if count > 1:
            messages.append(Error(f"{count} WebMCP tools are named {name!r}.", id="webmcp.E002"))
    for tool in registry.tools():
        messages.extend(_check_tool(tool))
    messages.extend(_check_reasons())
    return messages


def _check_tool(tool: ToolDeclaration) -> Iterable[CheckMessage]:
    def error(message: str, check_id: str, hint: str | None = None) -> Error:
        return Error(message, hint=hint, obj=f"WebMCP tool {tool.name!r}", id=check_id)

    if not TOOL_NAME_PATTERN.fullmatch(tool.name):
        yield error(
            "The tool name is not 1-128 ASCII letters, digits, '_', '-' or '.'.",
            "webmcp.E001",
            "Browsers refuse to register such a tool.",
        )
    if not str(tool.description).strip():
        yield error("The tool has no description.", "webmcp.E005", "Browsers refuse an empty description.")
    if tool.method not in METHODS:
        yield error(f"Method {tool.method!r} is not one of {', '.join(METHODS)}.", "webmcp.E009")
    schema_fields: set[str] | None = None
    try:
        schema_fields = set(tool.input_schema()["properties"])
    except TypeError as exc:
        yield error(str(exc), "webmcp.E006", "Give a DRF serializer class, a Django form class or a dict.")
    except SchemaGenerationError as exc:
        yield error(
            str(exc), "webmcp.E006", "Use a supported serializer field or extend django_webmcp.schema."
        )
    try:
        tool.output_schema()
    except (SchemaGenerationError, TypeError) as exc:
        yield error(str(exc), "webmcp.E016", "Give a DRF serializer class or a JSON Schema dict as output.")
    if tool.debugging and (tool.consequential or not tool.read_only) and tool.method != "GET":
        yield Warning(
            "A debugging tool that writes: agents at work never see it over MCP, but the page offers it.",
            obj=f"WebMCP tool {tool.name!r}",
            id="webmcp.W003",
        )
    endpoint_params = url_parameters(tool.endpoint)
    if url_parameter_sets(tool.endpoint) is None:
        yield error(f"The endpoint URL name {tool.endpoint!r} does not exist.", "webmcp.E004")
    elif tool.route_param and tool.route_param not in endpoint_params:
        yield error(
            f"route_param {tool.route_param!r} is not a URL kwarg of endpoint {tool.endpoint!r}.",
            "webmcp.E013",
        )
    if tool.headless and tool.exposures:
        yield error("A headless tool (MCP only) is exposed on a page: remove its exposures.", "webmcp.E016")
    if not tool.exposures and not tool.headless:
        yield Warning(
            "The tool is exposed on no route, so no page offers it.",
            obj=f"WebMCP tool {tool.name!r}",
            id="webmcp.W001",
        )
    unconditional_routes: Counter[str] = Counter()
    routes: Counter[str] = Counter()
    for exposure in tool.exposures:
        yield from _check_exposure(tool, exposure, endpoint_params, schema_fields, error)
        routes[exposure.url_name] += 1
        if exposure.when is None:
            unconditional_routes[exposure.url_name] += 1
    for route, count in sorted(routes.items()):
        if count > 1 and unconditional_routes[route]:
            yield error(
                f"Route {route!r} has {count} exposures of this tool and at least one has no `when`.",
                "webmcp.E011",
                "Several exposures on one route need mutually exclusive `when` predicates.",
            )


def _check_exposure(
    tool: ToolDeclaration,
    exposure: Exposure,
    endpoint_params: frozenset[str],
    schema_fields: set[str] | None,
    error: Callable[..., Error],
) -> Iterable[CheckMessage]:
    route_exists = url_parameter_sets(exposure.url_name) is not None
    if not route_exists:
        yield error(f"The exposure route {exposure.url_name!r} is not a URL name.", "webmcp.E003")
    if exposure.confirm and tool.method == "GET":
        yield error(
            f"The exposure on {exposure.url_name!r} asks the person to confirm a GET tool.",
            "webmcp.E007",
            "Confirmation is for writes; a read must answer at once.",
        )
    if exposure.binding is Binding.ROUTE:
        if not tool.route_param:
            yield error(
                f"The route-bound exposure on {exposure.url_name!r} has no route_param.", "webmcp.E008"
            )
        elif route_exists and tool.route_param not in url_parameters(exposure.url_name):
            yield error(
                f"Route {exposure.url_name!r} does not capture route_param {tool.route_param!r}.",
                "webmcp.E012",
            )
    # Every endpoint kwarg must be fillable: from the page's URL for route-bound tools,
    # otherwise from the input. (Unknown when the schema could not be generated: E006 says why.)
    if schema_fields is None:
        return
    from_route = {tool.route_param} if exposure.binding is not Binding.INPUT else set()
    missing = sorted(endpoint_params - schema_fields - from_route)
    if missing:
        yield error(
            f"The {exposure.binding.value} exposure on {exposure.url_name!r} cannot fill endpoint "
            f"kwarg(s) {', '.join(missing)}.",
            "webmcp.E014",
            "Add them to the input serializer or make them the route_param.",
        )


def _check_reasons() -> Iterable[CheckMessage]:
    overrides = getattr(settings, "WEBMCP_REASONS", {})
    unknown = sorted(set(overrides) - set(DEFAULT_REASONS))
    if unknown:
        yield Error(
            f"WEBMCP_REASONS has unknown key(s): {', '.join(unknown)}.",
            hint=f"Known keys: {', '.join(DEFAULT_REASONS)}.",
            id="webmcp.E015",
        )


def check_default_registry(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The registered check: the default registry, looked up at call time (tests may swap it)."""
    return check_registry(registry_module.registry)


def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Settings named WEBMCP_… that django-webmcp does not know (webmcp.W002), and a permissions-policy
    allowlist it cannot write (webmcp.E017)."""
    messages: list[CheckMessage] = []
    for name in sorted(dir(settings)):
        if name.startswith("WEBMCP_") and name not in DEFAULTS:
            messages.append(
                Warning(
                    f"{name} is not a django-webmcp setting; it is ignored.",
                    hint=f"Known settings: {', '.join(sorted(DEFAULTS))}.",
                    id="webmcp.W002",
                )
            )
    origins = getattr(settings, "WEBMCP_PERMISSIONS_POLICY", ["self"])
    if origins is not None:
        try:
            permissions_policy(origins)
        except (InvalidAllowlist, TypeError) as exc:
            messages.append(Error(f"WEBMCP_PERMISSIONS_POLICY: {exc}", id="webmcp.E017"))
    return messages
