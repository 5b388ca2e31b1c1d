"""The django-oauth-toolkit adapter (the `[oauth]` extra): the toolkit is the authorization server.

`ProtectedResourceMetadataView` is the toolkit's own RFC 9728 view, whose values come from the
WEBMCP_OAUTH_* settings when they are set and otherwise from the toolkit's `OAUTH2_PROTECTED_RESOURCE_*`
settings and scopes backend. Subclass it to serve one resource at its path-component form.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from oauth2_provider.views import OAuthProtectedResourceMetadataView

from django_webmcp._compat import login_not_required
from django_webmcp.conf import setting
from django_webmcp.oauth import configured


class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):
    """django-oauth-toolkit's metadata view, configured by WEBMCP_OAUTH_* where set."""

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        return login_not_required(super().as_view(**initkwargs))

    def get_resource(self, request: HttpRequest) -> Any:
        if setting("WEBMCP_OAUTH_RESOURCE") is not None:
            return configured("WEBMCP_OAUTH_RESOURCE", request)
        return super().get_resource(request)

    def get_authorization_servers(self, request: HttpRequest) -> Any:
        if setting("WEBMCP_OAUTH_AUTHORIZATION_SERVERS") is not None:
            return list(configured("WEBMCP_OAUTH_AUTHORIZATION_SERVERS", request))
        return super().get_authorization_servers(request)

    def get_scopes_supported(self) -> Any:
        if setting("WEBMCP_OAUTH_SCOPES") is not None:
            return sorted(configured("WEBMCP_OAUTH_SCOPES", None))
        return super().get_scopes_supported()
