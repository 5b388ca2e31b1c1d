"""MCP's endpoint as an OAuth 2.1 protected resource: its RFC 9728 metadata and its Bearer challenges.

The authorization server is not this package's business: say where it is with settings (a value, or the
dotted path of a callable that takes the request), or use the django-oauth-toolkit adapter
(`django_webmcp.oauth.dot`). What an MCP client needs from the resource is here:

- `ProtectedResourceMetadataView`: the document at `/.well-known/oauth-protected-resource[/<path>]`
  (`resource`, `authorization_servers`, `scopes_supported`, `bearer_methods_supported`);
- `bearer_challenge`: the `WWW-Authenticate` value of a 401 (no or a bad token) or a 403 (a token without
  the scope), which points the client to that document (`resource_metadata`) and names the scope;
- `django_webmcp.scopes`: whether a token's scopes allow a tool, asked the same way to hide it from
  `tools/list` and to refuse its call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.utils.module_loading import import_string
from django.views import View

from django_webmcp._compat import login_not_required
from django_webmcp.conf import setting

__all__ = ["ProtectedResourceMetadataView", "bearer_challenge", "configured", "metadata_document"]


def bearer_challenge(
    *,
    resource_metadata: str = "",
    realm: str | None = None,
    error: str = "",
    scope: str = "",
    error_description: str = "",
) -> str:
    """A `WWW-Authenticate` value (RFC 6750 §3, RFC 9728 §5.1), parameters in a fixed order.

    `error`: "" (no token was sent: signing in would help), "invalid_token" (401) or
    "insufficient_scope" (403, with the `scope` the call needs). `realm` None: WEBMCP_OAUTH_REALM.
    """
    realm = setting("WEBMCP_OAUTH_REALM") if realm is None else realm
    params = [f'resource_metadata="{resource_metadata}"'] if resource_metadata else []
    if realm:
        params.append(f'realm="{_quoted(realm)}"')
    if error:
        params.append(f'error="{error}"')
    if error_description:
        params.append(f'error_description="{_quoted(error_description)}"')
    if scope:
        params.append(f'scope="{_quoted(scope)}"')
    return "Bearer " + ", ".join(params)


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def configured(name: str, request: HttpRequest | None) -> Any:
    """The value of setting `name`: the setting itself, or what the callable it names (a dotted path or
    a callable) answers for `request`."""
    value = setting(name)
    if isinstance(value, str) and "." in value and not value.startswith(("http://", "https://")):
        value = import_string(value)
    if callable(value):
        return value(request)
    return value


def metadata_document(request: HttpRequest) -> dict[str, Any]:
    """The RFC 9728 document from the WEBMCP_OAUTH_* settings."""
    resource = configured("WEBMCP_OAUTH_RESOURCE", request) or request.build_absolute_uri("/mcp")
    document: dict[str, Any] = {"resource": resource}
    servers = configured("WEBMCP_OAUTH_AUTHORIZATION_SERVERS", request)
    if servers:
        document["authorization_servers"] = list(servers)
    scopes = configured("WEBMCP_OAUTH_SCOPES", request)
    if scopes is not None:
        document["scopes_supported"] = sorted(scopes)
    document["bearer_methods_supported"] = ["header"]
    return document


class ProtectedResourceMetadataView(View):
    """`GET /.well-known/oauth-protected-resource[/<resource_path>]`: the resource's metadata.

    `document` (a callable taking the request) replaces the settings-made document, e.g. with an
    adapter's (`django_webmcp.oauth.dot`). Open to every origin and to visitors who are not signed in:
    the document is public by design.
    """

    http_method_names = ["get", "head", "options"]
    document: Callable[[HttpRequest], dict[str, Any]] | None = None

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        return login_not_required(super().as_view(**initkwargs))

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        make = self.document or metadata_document
        response = JsonResponse(make(request))
        response["Access-Control-Allow-Origin"] = "*"
        return response
