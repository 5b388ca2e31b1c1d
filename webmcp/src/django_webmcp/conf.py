"""django-webmcp's settings, each read at use (so `override_settings` works), all named `WEBMCP_…`.

Each setting is documented in docs/settings.md; an unknown `WEBMCP_` name is reported by the system
check webmcp.W002 (a typo would otherwise be silently ignored).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

#: Every setting and its default.
DEFAULTS: dict[str, Any] = {
    # Renames of the reasons the browser runtime gives on its own (registry.DEFAULT_REASONS' keys).
    "WEBMCP_REASONS": {},
    # The MCP server's name and version (`serverInfo`); the name is also the audience of its confirmations.
    "WEBMCP_SERVER_NAME": "webmcp",
    "WEBMCP_SERVER_VERSION": "",
    # Over MCP, list tools annotated `debugging` too (off: they are for the page's developers).
    "WEBMCP_MCP_DEBUGGING_TOOLS": False,
    # Over MCP, hide the tools a caller's token lacks the scope for (a call is refused the same way).
    "WEBMCP_MCP_HIDE_OUT_OF_SCOPE": False,
    # The origins the `tools` permissions-policy feature allows ("self", "*" or origins); None: no header.
    "WEBMCP_PERMISSIONS_POLICY": ["self"],
    # OAuth (RFC 9728): the protected resource, its authorization servers and scopes: a value, or the
    # dotted path of a callable taking the request.
    "WEBMCP_OAUTH_RESOURCE": None,
    "WEBMCP_OAUTH_AUTHORIZATION_SERVERS": None,
    "WEBMCP_OAUTH_SCOPES": None,
    # The realm of the Bearer challenges (RFC 6750); "" leaves it out.
    "WEBMCP_OAUTH_REALM": "",
}


def setting(name: str) -> Any:
    """The project's value of `name`, else its default."""
    return getattr(settings, name, DEFAULTS[name])
