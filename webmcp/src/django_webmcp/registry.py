"""The WebMCP tool registry: every tool the site offers to browser agents, declared once in Python.

Apps declare their tools in a `tools.py` module, autodiscovered at start-up. Everything else is
derived from those declarations, so no second description can drift out of sync:

- the input schema, generated from the serializer or form the server validates with, or given as a
  plain JSON Schema (`django_webmcp.schema`); the output schema from the output serializer;
- the catalogue of a route (what an eval runner or a reviewer reads);
- the manifest of one request (what the browser runtime registers, filtered by `when` predicates);
- the fingerprint that ties a trace or an eval report to the exact tool set that produced it.

The registry fails fast: a duplicate name raises at registration, everything else is reported by the
system checks in `django_webmcp.checks` before the server starts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from django_webmcp.annotations import webmcp_annotations
from django_webmcp.conf import setting
from django_webmcp.routing import url_template
from django_webmcp.schema import empty_object_schema, input_schema, output_schema

TOOL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,128}")  # what Chromium accepts (use fullmatch)
METHODS = ("GET", "POST", "PUT", "DELETE")

# Envelope reasons the browser runtime produces on its own. Their spelling belongs to the project's
# error vocabulary, so a project may rename them with the WEBMCP_REASONS setting.
DEFAULT_REASONS: dict[str, str] = {
    "unavailable": "SERVICE_UNAVAILABLE",  # a read got no usable answer
    "routeMismatch": "ROUTE_OBJECT_MISMATCH",  # a route-bound tool was asked about another object
    "declined": "FORM_RESET",  # the person declined a call that needed their press
    "notOnPage": "NOT_ON_THIS_PAGE",  # nothing on the page can confirm this call's object
    "busy": "CONFIRMATION_PENDING",  # an earlier call of this tool still waits for the person
}

# The envelopes the runtime answers with on its own (no usable answer from the server, or a call it
# refuses before sending). The runtime reads them from the manifest and writes none itself; `{name}`
# is filled in by the runtime. Reasons are keys of DEFAULT_REASONS (renamable) or literal reasons.
RUNTIME_ANSWERS: dict[str, dict[str, Any]] = {
    "unavailable": {
        "code": "TEMPORARY_FAILURE",
        "reason": "unavailable",
        "retryable": True,
        "message": "The service did not give a usable answer.",
        "nextAction": "Retry later; do not report this as an empty result.",
    },
    "responseLost": {
        "code": "UNKNOWN_OUTCOME",
        "reason": "RESPONSE_LOST",
        "message": "The request was sent but its answer was lost: it may or may not have taken effect.",
        "nextAction": "Check the current state (read it again) before retrying; do not assume it failed.",
    },
    "notAnObject": {
        "code": "INVALID_INPUT",
        "reason": "VALIDATION_ERROR",
        "message": "The input must be a JSON object.",
        "nextAction": "Call the tool again with a JSON object.",
    },
    "invalidInput": {
        "code": "INVALID_INPUT",
        "reason": "VALIDATION_ERROR",
        "message": "Invalid input: {fields}.",
        "nextAction": "Call the tool again with an input that follows the schema.",
    },
    "routeMismatch": {
        "code": "INVALID_INPUT",
        "reason": "routeMismatch",
        "message": "This page is about another object ({param} {expected}, not {given}).",
        "nextAction": "Call {tool} with {} to act on this page's object, or open the page of {given} "
        "and call {tool} there.",
    },
    "notOnPage": {
        "code": "INVALID_INPUT",
        "reason": "notOnPage",
        "message": "Nothing on this page can confirm this call for the person.",
        "nextAction": "Use an id that this page lists, or open the object's own page and call the tool "
        "there.",
    },
    "busy": {
        "code": "TEMPORARY_FAILURE",
        "reason": "busy",
        "retryable": True,
        "message": "The person has not answered an earlier request of this tool yet.",
        "nextAction": "Wait for the earlier call to answer, then try again.",
    },
    "declined": {
        "code": "USER_CANCELLED",
        "reason": "declined",
        "message": "The person declined: nothing was done.",
        "nextAction": "Stop; do not retry unless the person asks again.",
    },
}


def runtime_answers() -> dict[str, dict[str, Any]]:
    """RUNTIME_ANSWERS with each reason key spelled as the project spells it (WEBMCP_REASONS)."""
    reasons = error_reasons()
    return {
        key: {
            **answer,
            "reason": reasons.get(answer["reason"], answer["reason"]),
            "retryable": answer.get("retryable", False),
        }
        for key, answer in RUNTIME_ANSWERS.items()
    }


# Words the runtime shows the person (translated per request), never sent to the agent.
DEFAULT_TEXTS: dict[str, Any] = {
    "confirm": _("An assistant asks to do this for you. Press the button to confirm."),
    "decline": _("Not now"),
}

#: Request header naming the tool a call comes from; its answer then carries the tool's result.
TOOL_HEADER = "X-WebMCP-Tool"
#: Request header with the address of the page a tool call came from (whose region the answer redraws).
PAGE_HEADER = "X-WebMCP-Page"
#: id of the JSON island that carries a tool result inside an HTML answer.
RESULT_ELEMENT_ID = "webmcp-result"


class Binding(StrEnum):
    """How a tool takes its input on one route. Every tool is registered imperatively: a declarative
    `<form toolname>` reaches the agent without annotations, maxLength or additionalProperties, and
    its omitted fields keep the form's values, so it cannot carry the contract."""

    INPUT = "input"  # inputSchema generated from the input serializer
    ROUTE = "route"  # bound to the page's object: takes `{}`, its route_param comes from the URL


@dataclass(frozen=True)
class ToolContext:
    """What a `when` predicate and the manifest may look at: one request on one route, plus the
    page's state (e.g. whether the visitor is registered), supplied by the view."""

    request: HttpRequest | None  # None only for a page rendered without a request (and so no route)
    url_name: str
    url_kwargs: Mapping[str, Any]
    state: Mapping[str, Any]


@dataclass(frozen=True)
class Exposure:
    """One route that offers a tool, how it offers it, and when (None = always)."""

    url_name: str
    binding: Binding
    when: Callable[[ToolContext], bool] | None = None
    #: The call waits until the person presses the page's form marked for it (`webmcp_confirm`),
    #: or declines; only then is the request sent.
    confirm: bool = False


@dataclass(frozen=True)
class ToolDeclaration:
    """A tool, declared once: its contract with the agent and the API endpoint that fulfils it."""

    name: str
    description: str
    #: What the tool takes: a DRF serializer class (the `[drf]` extra), a Django form class, or a JSON
    #: Schema dict (an object schema; the endpoint then validates the input itself); None: nothing.
    input_serializer: Any = field(hash=False)
    #: URL name the browser runtime calls: one request per call. A page route answers a tool call with
    #: its refreshed region and the result (`django_webmcp.responses`); a JSON endpoint with the result only.
    endpoint: str
    method: str  # GET | POST | PUT | DELETE
    exposures: tuple[Exposure, ...]
    route_param: str = ""  # input field that is also the endpoint's URL kwarg (e.g. an object id)
    read_only: bool = False
    untrusted_content: bool = False
    consequential: bool = False
    title: str = ""
    #: MCP's hints (django_webmcp.mcp): may it undo something the person has (a registration, a held seat)?
    #: Does calling it twice with the same input change nothing more than once?
    destructive: bool = False
    idempotent: bool = False
    #: Over MCP (django_webmcp.mcp): the OAuth scope a call needs, and whether it needs a signed-in person
    #: at all (False: anonymous clients may call it, a token only adds who is asking).
    auth_scope: str = ""
    auth_required: bool = False
    #: A route-bound tool whose input depends on the page's object (one event's questions): the JSON
    #: Schema of what it takes on this page, built from the request's context (the page's state, which
    #: its view fills); None, or a None answer, when it takes nothing there. The app builds it from its
    #: own data, never from text its users wrote (`check_route_schema` refuses a schema with text an
    #: agent would read as ours: titles, descriptions, examples).
    route_schema: Callable[[ToolContext], dict[str, Any] | None] | None = None
    #: What the tool answers on success: a DRF serializer class or a JSON Schema dict. Sent over MCP as
    #: `outputSchema` (always), and to browsers that read `outputSchema` in `registerTool`.
    output_serializer: Any = field(default=None, hash=False)
    #: The draft's `debugging` annotation: a tool for the page's developers, not for agents at work.
    #: Not listed over MCP unless WEBMCP_MCP_DEBUGGING_TOOLS is on.
    debugging: bool = False
    #: Offered over MCP only, by design: no page offers it (a headless agent's work, e.g. an
    #: organiser's, which has no button an agent in the browser could wait for). Its `exposures` are
    #: then empty, and the check that warns of a tool no page offers leaves it alone.
    headless: bool = False

    def __post_init__(self) -> None:
        # Accept a list for convenience but keep the declaration immutable and hashable.
        object.__setattr__(self, "exposures", tuple(self.exposures))

    @property
    def annotations(self) -> dict[str, bool]:
        """The true hints only, spelled as the browser understands them (`django_webmcp.annotations`)."""
        return webmcp_annotations(self)

    def input_schema(self) -> dict[str, Any]:
        """The schema of the full input, as the serializer (or form) validates it."""
        return input_schema(self.input_serializer)

    def output_schema(self) -> dict[str, Any] | None:
        """The schema of a successful answer, from `output_serializer`; None when none is declared."""
        return output_schema(self.output_serializer)

    def schema_for(self, binding: Binding, context: ToolContext | None = None) -> dict[str, Any]:
        """The input an agent gives through `binding`: a route-bound tool takes nothing, its one
        parameter is the page's object, unless its `route_schema` says what it takes on this page
        (`context`: the request; without one, the declaration's own schema)."""
        if binding is Binding.ROUTE:
            return self.route_input(context)
        return self.input_schema()

    def route_input(self, context: ToolContext | None) -> dict[str, Any]:
        """What the tool takes on the page of `context` when bound to its route."""
        if self.route_schema is None or context is None:
            return empty_object_schema()
        schema = self.route_schema(context)
        if schema is None:
            return empty_object_schema()
        check_route_schema(self.name, schema)
        return schema


class RegistryError(ImproperlyConfigured):
    """A tool declaration that cannot work; raised as early as it can be detected."""


#: Keywords whose values an agent reads as words: a schema built from an app's data must not carry
#: them (its users' text would become the tool's own words).
TEXT_KEYWORDS = frozenset({"title", "description", "examples", "default", "$comment", "deprecated"})


def check_route_schema(tool: str, schema: Any) -> None:
    """A route schema is an object schema with no free text in it, or a `RegistryError`."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise RegistryError(f"Tool {tool!r}: a route schema is a JSON Schema of type object.")

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in TEXT_KEYWORDS and where != "properties":
                    raise RegistryError(f"Tool {tool!r}: its route schema carries text ({key!r}).")
                walk(value, key)
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    walk(schema, "")


class DuplicateToolError(RegistryError):
    pass


class AmbiguousExposureError(RegistryError):
    """Two exposures of one tool passed for one request: their `when` predicates overlap."""


def error_reasons() -> dict[str, str]:
    """The reasons the runtime uses for errors it produces itself, after project overrides."""
    return {**DEFAULT_REASONS, **setting("WEBMCP_REASONS")}


def _json_value(value: Any) -> Any:
    """A URL kwarg as JSON: converters may produce objects (a UUID), the runtime needs text."""
    return value if isinstance(value, str | int) and not isinstance(value, bool) else str(value)


def _canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Registry:
    """A set of tool declarations, keyed by name, and everything derived from them."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolDeclaration] = {}
        self._fingerprint: str | None = None
        #: Each tool's output schema, made once (`output_schema_of`).
        self._outputs: dict[str, dict[str, Any] | None] = {}

    def register(self, tool: ToolDeclaration) -> ToolDeclaration:
        """Add `tool`. A second tool with the same name raises now, not when a browser rejects it."""
        if tool.name in self._tools:
            raise DuplicateToolError(f"A WebMCP tool named {tool.name!r} is already registered.")
        self._tools[tool.name] = tool
        self._fingerprint = None
        return tool

    def output_schema_of(self, tool: ToolDeclaration) -> dict[str, Any] | None:
        """`tool.output_schema()`, made once per registered tool, as the fingerprint that hashes it is:
        every page's manifest carries it, and walking a nested output serializer took up to 1.6 ms a
        tool, several per page. Shared between requests: read it, never change it."""
        if self._tools.get(tool.name) is not tool:  # not (or no longer) ours: made each time
            return tool.output_schema()
        if tool.name not in self._outputs:
            self._outputs[tool.name] = tool.output_schema()
        return self._outputs[tool.name]

    def tools(self) -> tuple[ToolDeclaration, ...]:
        """Every tool, sorted by name (the order browsers list them in)."""
        return tuple(sorted(self._tools.values(), key=lambda tool: tool.name))

    def get(self, name: str) -> ToolDeclaration | None:
        return self._tools.get(name)

    def exposures_for(self, url_name: str) -> tuple[tuple[ToolDeclaration, Exposure], ...]:
        """Every (tool, exposure) pair declared for `url_name`, whatever the predicates say."""
        return tuple(
            (tool, exposure)
            for tool in self.tools()
            for exposure in tool.exposures
            if exposure.url_name == url_name
        )

    def active_exposures(self, context: ToolContext) -> tuple[tuple[ToolDeclaration, Exposure], ...]:
        """The exposures whose `when` passes for this request: at most one per tool.

        Two passing exposures of one tool would give the agent two contracts for one name, so that
        is a programming error and raises instead of picking one silently.
        """
        active: dict[str, tuple[ToolDeclaration, Exposure]] = {}
        for tool, exposure in self.exposures_for(context.url_name):
            if exposure.when is not None and not exposure.when(context):
                continue
            if tool.name in active:
                raise AmbiguousExposureError(
                    f"Tool {tool.name!r} has more than one exposure passing on route "
                    f"{context.url_name!r}; make their `when` predicates mutually exclusive."
                )
            active[tool.name] = (tool, exposure)
        return tuple(active.values())

    def catalogue(self, url_name: str | None = None) -> dict[str, Any]:
        """`{"tools": [{name, description, inputSchema, annotations?}]}`, sorted by name.

        With `url_name`, the tools that can appear on that route (predicates ignored; when a tool
        has several exposures there, the first declared one gives its schema). Without, every tool
        with the schema of its full input.
        """
        entries = []
        for tool in self.tools():
            if url_name is None:
                schema = tool.input_schema()
            else:
                exposure = next((e for e in tool.exposures if e.url_name == url_name), None)
                if exposure is None:
                    continue
                schema = tool.schema_for(exposure.binding)
            entry: dict[str, Any] = {
                "name": tool.name,
                "description": str(tool.description),
                "inputSchema": schema,
            }
            if tool.annotations:
                entry["annotations"] = tool.annotations
            output = self.output_schema_of(tool)
            if output is not None:
                entry["outputSchema"] = output
            entries.append(entry)
        return {"tools": entries}

    def describe(self) -> dict[str, Any]:
        """Everything that defines the tool set, as plain data: what the fingerprint hashes.

        Text is taken untranslated so that the fingerprint does not depend on the active language.
        """
        with translation.override(None):
            tools = []
            for tool in self.tools():
                exposures = [
                    {
                        "route": exposure.url_name,
                        "binding": exposure.binding.value,
                        "confirm": exposure.confirm,
                        "conditional": exposure.when is not None,
                        "inputSchema": tool.schema_for(exposure.binding),
                    }
                    for exposure in tool.exposures
                ]
                tools.append(
                    {
                        "name": tool.name,
                        "title": str(tool.title),
                        "description": str(tool.description),
                        "annotations": tool.annotations,
                        "endpoint": tool.endpoint,
                        "method": tool.method,
                        "routeParam": tool.route_param,
                        # Whether its page input depends on the page's object (the hook's output is not
                        # part of the tool set: it varies per page).
                        "routeSchema": tool.route_schema is not None,
                        "inputSchema": tool.input_schema(),
                        "exposures": sorted(exposures, key=_canonical_json),
                    }
                )
                # Added only when declared, so a tool set without outputs keeps its fingerprint.
                output = self.output_schema_of(tool)
                if output is not None:
                    tools[-1]["outputSchema"] = output
        return {"tools": tools}

    def fingerprint(self) -> str:
        """ "sha256:<hex>" of the canonical description; the same declarations give the same value in
        every process. Cached: declarations only change by `register`, which clears it."""
        if self._fingerprint is None:
            digest = hashlib.sha256(_canonical_json(self.describe()).encode())
            self._fingerprint = "sha256:" + digest.hexdigest()
        return self._fingerprint

    def manifest(self, context: ToolContext) -> dict[str, Any]:
        """What the browser runtime needs for this request: the tools whose predicates pass, each
        with the endpoint it calls as a URL template and, for a route-bound tool, the page's values."""
        return {
            "fingerprint": self.fingerprint(),
            "route": context.url_name or None,
            "stateVersion": context.state.get("stateVersion", 0),
            "answers": runtime_answers(),
            "texts": {key: str(text) for key, text in DEFAULT_TEXTS.items()},
            "tools": [
                self._manifest_entry(tool, exposure, context)
                for tool, exposure in self.active_exposures(context)
            ],
        }

    def _manifest_entry(
        self, tool: ToolDeclaration, exposure: Exposure, context: ToolContext
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": tool.name}
        if tool.title:
            entry["title"] = str(tool.title)
        entry["description"] = str(tool.description)
        entry["inputSchema"] = tool.schema_for(exposure.binding, context)
        if tool.annotations:
            entry["annotations"] = tool.annotations
        output = self.output_schema_of(tool)
        if output is not None:
            entry["outputSchema"] = output  # registered only where the browser reads it (webmcp.js)
        entry["binding"] = exposure.binding.value
        entry["method"] = tool.method
        entry["endpoint"] = url_template(tool.endpoint)
        if exposure.binding is Binding.ROUTE:
            if tool.route_param not in context.url_kwargs:
                raise RegistryError(
                    f"Tool {tool.name!r} needs {tool.route_param!r} from the URL of route "
                    f"{context.url_name!r}, which does not capture it."
                )
            entry["routeValues"] = {tool.route_param: _json_value(context.url_kwargs[tool.route_param])}
        if exposure.confirm:
            entry["confirm"] = True
        return entry


# The default registry: apps declare their tools in `tools.py`, which WebmcpConfig.ready() imports.
registry = Registry()


def catalogue_fingerprint() -> str:
    """The default registry's fingerprint (cached by the registry), as /health reports it."""
    return registry.fingerprint()
