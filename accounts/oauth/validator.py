"""The audience rule (RFC 8707): every token this server issues is for `settings.MCP_RESOURCE`.

django-oauth-toolkit accepts any `resource` and treats a token without one as good anywhere. Here a
request may name our MCP endpoint only (exactly, not by prefix: `/mcp-other` is another resource), and
a request that names none is bound to it, so no token is ever unrestricted.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors


def foreign_resources(resources: list[str]) -> list[str]:
    """The resources in a request that are not ours (an authorize or a token request refuses them)."""
    return [resource for resource in resources if resource != settings.MCP_RESOURCE]


class ResourceBoundValidator(OAuth2Validator):
    def _check_and_set_request_resource(self, request: Any) -> None:
        super()._check_and_set_request_resource(request)
        foreign = foreign_resources(list(request.resource or []))
        if foreign:
            raise errors.CustomOAuth2Error(
                error="invalid_target",
                description=f"This server issues tokens for {settings.MCP_RESOURCE} only.",
                request=request,
            )
        request.resource = [settings.MCP_RESOURCE]
