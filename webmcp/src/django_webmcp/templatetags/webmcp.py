"""Template tags that put the registry into a page: `{% load webmcp %}`.

The page renders what the runtime needs (the manifest) and marks the forms a person presses to confirm
a tool call; both come from the same declarations, and the page writes no tool text.
"""

from __future__ import annotations

import json
from typing import Any

from django import template
from django.templatetags.static import static
from django.utils.html import format_html, json_script
from django.utils.safestring import SafeString

from django_webmcp import registry as registry_module
from django_webmcp._compat import csp_nonce
from django_webmcp.forms import form_tool_attributes
from django_webmcp.registry import ToolContext

register = template.Library()

MANIFEST_ELEMENT_ID = "webmcp-manifest"
#: The context key of the page whose tools a template draws, when it is not the requested route: after
#: a write, a view redraws a region of the page the write came from, and names that page's route
#: (a `ResolverMatch`) here, so the region's manifest and forms are that page's.
PAGE_ROUTE = "webmcp_page"


def tool_context(context: template.Context) -> ToolContext | None:
    """The ToolContext of the page being rendered (`PAGE_ROUTE`, else the request's route); None when
    it has no request or no named route.

    `view_name` rather than `url_name` so that a namespaced route ("app:name") matches its
    declaration; for a route without a namespace the two are the same.
    """
    request = context.get("request")
    match = context.get(PAGE_ROUTE) or getattr(request, "resolver_match", None)
    if request is None or match is None or not match.url_name:
        return None
    return ToolContext(
        request=request,
        url_name=match.view_name,
        url_kwargs=dict(match.kwargs),
        state=context.get("webmcp_state") or {},
    )


@register.simple_tag(takes_context=True)
def webmcp_tools(context: template.Context) -> SafeString:
    """The manifest of this request as `<script type="application/json" id="webmcp-manifest">`.

    json_script escapes <, > and &, so no text in the manifest can close the script element.
    """
    registry = registry_module.registry
    tool_ctx = tool_context(context)
    if tool_ctx is None:
        state = context.get("webmcp_state") or {}
        request = context.get("request")
        tool_ctx = ToolContext(request=request, url_name="", url_kwargs={}, state=state)
    return json_script(registry.manifest(tool_ctx), MANIFEST_ELEMENT_ID)


@register.simple_tag
def webmcp_meta() -> SafeString:
    """The catalogue fingerprint, so a trace or a crawler can tell which tool set a page served."""
    return format_html('<meta name="webmcp-catalogue" content="{}">', registry_module.registry.fingerprint())


@register.simple_tag(takes_context=True)
def webmcp_runtime(context: template.Context) -> SafeString:
    """The one script that registers the page's tools (an ES module: deferred, runs once), with the
    request's CSP nonce when the site's policy uses nonces (`django_webmcp._compat.csp_nonce`)."""
    nonce = csp_nonce(context.get("request"))
    if nonce:
        return format_html(
            '<script type="module" src="{}" nonce="{}"></script>', static("webmcp/webmcp.js"), nonce
        )
    return format_html('<script type="module" src="{}"></script>', static("webmcp/webmcp.js"))


@register.simple_tag
def webmcp_form_attrs(name: str, description: str, title: str = "", autosubmit: bool = False) -> SafeString:
    """EXPERIMENTAL (the draft's declarative API is an explainer): inside a `<form …>` tag, its
    ` toolname="…" tooldescription="…"` (`django_webmcp.forms.form_tool_attributes`)."""
    return form_tool_attributes(name, description, title=title, autosubmit=autosubmit)


@register.simple_tag(takes_context=True)
def webmcp_confirm(context: template.Context, tool_name: str, **values: Any) -> SafeString | str:
    """` data-webmcp-confirm="…"` on the form a person presses to confirm a call of `tool_name`.

    Renders nothing unless that tool's exposure on this request asks for confirmation, so the form
    stays a plain form for people. `values` name the object the form acts on (e.g. the id of the item
    in one row of a list), so the runtime asks for the press of the row the agent's input names.
    """
    tool_ctx = tool_context(context)
    if tool_ctx is None:
        return ""
    for tool, exposure in registry_module.registry.active_exposures(tool_ctx):
        if tool.name == tool_name and exposure.confirm:
            html = format_html(' data-webmcp-confirm="{}"', tool.name)
            if values:
                html += format_html(" data-webmcp-values='{}'", json.dumps(values, sort_keys=True))
            return html
    return ""
