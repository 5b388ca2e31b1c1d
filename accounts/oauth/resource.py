"""`/mcp` as an OAuth protected resource (RFC 9728): the document that says where its tokens come from.

A client that is refused (HTTP 401) reads `resource_metadata` from the challenge, or tries
`/.well-known/oauth-protected-resource/mcp` and then the root form; both answer the same document.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest
from django_webmcp.oauth.dot import ProtectedResourceMetadataView as ToolkitMetadataView


def metadata_url() -> str:
    """Where the resource's metadata is (the `resource_metadata` of every challenge at `/mcp`)."""
    return f"{settings.OAUTH_ISSUER}/.well-known/oauth-protected-resource/mcp"


class ProtectedResourceMetadata(ToolkitMetadataView):
    """The MCP endpoint's document (django-webmcp's adapter of django-oauth-toolkit's RFC 9728 view),
    at its path-component form and the root form (no other resource
    is served here). Read from the settings at each request, so SITE_URL is the one source."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any):
        if kwargs.get("resource_path", "mcp") != "mcp":
            raise Http404("no such protected resource")
        return super().get(request, *args, **kwargs)

    def get_resource(self, request: HttpRequest) -> str:
        return settings.MCP_RESOURCE

    def get_authorization_servers(self, request: HttpRequest) -> list[str]:
        return [settings.OAUTH_ISSUER]
