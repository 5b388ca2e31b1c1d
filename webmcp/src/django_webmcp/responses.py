"""How a page route answers a tool call: one request carries both the agent's result and the page.

The runtime calls a tool's endpoint once, with the `X-WebMCP-Tool` header. A JSON endpoint answers
with the result alone. A page route answers with the HTML of its refreshed live region
(`[data-webmcp-region]`) and the result as a JSON island (`<script type="application/json"
id="webmcp-result">`): the runtime swaps the region in, so the person sees what the agent did before
the call returns, and hands the island to the agent. A refusal is the JSON envelope with its status;
the page is left as it was.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.utils.html import json_script

from django_webmcp.http import same_site_path
from django_webmcp.registry import PAGE_HEADER, RESULT_ELEMENT_ID, TOOL_HEADER, TOOL_NAME_PATTERN


def tool_call(request: HttpRequest) -> str | None:
    """The name of the tool this request is a call of, or None for a person's request."""
    name = request.headers.get(TOOL_HEADER, "")
    return name if TOOL_NAME_PATTERN.fullmatch(name) else None


def tool_or_page(
    page: Callable[..., HttpResponse], tool: Callable[..., HttpResponse]
) -> Callable[..., HttpResponse]:
    """One route for a person's request and an agent's tool call of it, told apart here, once, by the
    tool header: `page` then serves only people and `tool` only tool calls."""

    @functools.wraps(page)
    def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return (tool if tool_call(request) else page)(request, *args, **kwargs)

    return view


def calling_page(request: HttpRequest) -> str:
    """Path and query of the page a tool call came from, when it is a page of this site; else ""."""
    return same_site_path(request, request.headers.get(PAGE_HEADER, ""))


class MalformedToolInput(ValueError):
    """The body of a tool call is not a JSON object."""


def tool_input(request: HttpRequest) -> Mapping[str, Any]:
    """The call's input besides the path: the query string of a GET, else the JSON body ({} if empty).

    A QueryDict is returned as it is, so the caller's validation can refuse a repeated parameter.
    """
    if request.method in ("GET", "HEAD"):
        return request.GET
    if not request.body:
        return {}
    try:
        data = json.loads(request.body)
    except (UnicodeDecodeError, ValueError) as error:
        raise MalformedToolInput("The request body is not valid JSON.") from error
    if not isinstance(data, dict):
        raise MalformedToolInput("The input must be a JSON object.")
    return data


def with_tool_result(
    response: HttpResponse, result: Mapping[str, Any], *, push_url: str | None = None
) -> HttpResponse:
    """Add the result island to a rendered region; `push_url` becomes the page's new address."""
    response.content = response.content + json_script(dict(result), RESULT_ELEMENT_ID).encode()
    if push_url is not None:
        response["HX-Push-Url"] = push_url
    return _private(response)


def tool_refusal(
    result: Mapping[str, Any], *, status: int, headers: Mapping[str, str] | None = None
) -> HttpResponse:
    """A refused call: the envelope alone, so the runtime leaves the page untouched."""
    response = JsonResponse(
        dict(result), status=status, headers=headers, json_dumps_params={"ensure_ascii": False}
    )
    return _private(response)


def _private(response: HttpResponse) -> HttpResponse:
    """A tool answer belongs to one visitor and one call: never cached, never confused with the page."""
    add_never_cache_headers(response)
    patch_vary_headers(response, (TOOL_HEADER,))
    return response
