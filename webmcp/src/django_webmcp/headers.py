"""The `tools` permissions-policy feature (WebMCP draft): which documents may register tools.

The draft's default allowlist is `'self'`: a page and its same-origin frames. A cross-origin frame needs
`allow="tools"` on its `<iframe>` and the embedding page's policy to name its origin. These helpers
write the `Permissions-Policy` header's `tools` member (RFC 8941 structured fields):

- `permissions_policy(["self"])` → `tools=(self)`; `["*"]` → `tools=*`; `[]` → `tools=()` (nobody);
- `PermissionsPolicyMiddleware` adds it to every response from WEBMCP_PERMISSIONS_POLICY, keeping the
  other members of a header a view or another middleware set;
- `tools_policy(*origins)` decorates one view with its own allowlist.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest, HttpResponseBase

from django_webmcp.conf import setting

HEADER = "Permissions-Policy"
FEATURE = "tools"
_ORIGIN = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]+)?")


class InvalidAllowlist(ValueError):
    """An allowlist entry is not "self", "*" or an origin such as https://example.org."""


def permissions_policy(origins: Iterable[str]) -> str:
    """The `tools=…` member for `origins` ("self", "*", or origins like "https://a.example")."""
    entries = list(origins)
    if "*" in entries:
        return f"{FEATURE}=*"
    items = []
    for entry in entries:
        if entry == "self":
            items.append("self")
        elif _ORIGIN.fullmatch(entry):
            items.append(f'"{entry}"')
        else:
            raise InvalidAllowlist(f"{entry!r} is not self, * or an origin (scheme://host[:port]).")
    return f"{FEATURE}=({' '.join(items)})"


def with_tools_member(existing: str, member: str) -> str:
    """`existing` header value with its `tools` member replaced by (or extended with) `member`."""
    kept = [part.strip() for part in existing.split(",") if part.strip()]
    kept = [part for part in kept if part.split("=", 1)[0].strip() != FEATURE]
    return ", ".join([*kept, member])


def apply(response: HttpResponseBase, origins: Iterable[str]) -> HttpResponseBase:
    """Set the `tools` member of `response`'s Permissions-Policy to `origins`."""
    response[HEADER] = with_tools_member(response.get(HEADER, ""), permissions_policy(origins))
    return response


class PermissionsPolicyMiddleware:
    """Adds `tools=(…)` from WEBMCP_PERMISSIONS_POLICY (None: leaves the header alone) to each response
    that has none yet (a view's `tools_policy` wins)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        origins = setting("WEBMCP_PERMISSIONS_POLICY")
        if origins is not None and not getattr(response, "_webmcp_tools_policy", False):
            apply(response, origins)
        return response


def tools_policy(*origins: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A view decorator: this view's responses allow `origins` to register tools."""
    member = permissions_policy(origins)  # checked once, when the view is decorated

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            response = view(request, *args, **kwargs)
            response[HEADER] = with_tools_member(response.get(HEADER, ""), member)
            response._webmcp_tools_policy = True
            return response

        return wrapped

    return decorate
