"""/mcp over the test app's tools, and its OAuth metadata (the settings projects with the [mcp] extra)."""

from __future__ import annotations

import json

from django.http import HttpRequest
from django.test import RequestFactory
from django.urls import path
from django_webmcp.mcp import McpAnswer, McpCall, mcp_view
from django_webmcp.oauth import ProtectedResourceMetadataView

from . import views

SCOPES = {"token-read": frozenset({"items:read"}), "token-all": frozenset({"items:read", "items:write"})}


def token_scopes(request: HttpRequest) -> frozenset[str] | None:
    """A made-up bearer check for tests: two fixed tokens and their scopes; none is anonymous."""
    header = request.headers.get("Authorization", "")
    return SCOPES.get(header.removeprefix("Bearer "), frozenset()) if header else None


def call(mcp_call: McpCall) -> McpAnswer:
    """Run the tool as the page's endpoint would: the same views, asked through a request of their own."""
    name, arguments = mcp_call.declaration.name, mcp_call.arguments
    factory = RequestFactory()
    if name == "reserve_item":
        item_id = str(arguments.get("item_id", ""))
        if not mcp_call.confirmed:
            return McpAnswer({"ok": True, "stateVersion": 0}, preview=f"Reserve {item_id}?")
        request = factory.post(
            f"/items/{item_id}/reserve", "", content_type="application/json", HTTP_X_WEBMCP_TOOL=name
        )
        response = views.reserve(request, item_id=item_id)
    elif name == "get_item":
        response = views.api_item(factory.get("/"), item_id=str(arguments.get("item_id", "")))
    else:
        response = views.api_search(factory.get("/api/search", {k: str(v) for k, v in arguments.items()}))
    body = json.loads(response.content)
    return McpAnswer(body, is_error=not body.get("ok"))


def metadata_url() -> str:
    return "http://testserver/.well-known/oauth-protected-resource/mcp"


endpoint = mcp_view(
    call=call,
    principal=lambda request: request.headers.get("Authorization", "anonymous"),
    allowed_origins=lambda: {"http://testserver"},
    scopes=token_scopes,
    resource_metadata=metadata_url,
)

urlpatterns = [
    path("mcp", endpoint, name="mcp"),
    path(
        ".well-known/oauth-protected-resource/mcp",
        ProtectedResourceMetadataView.as_view(),
        name="oauth-resource",
    ),
]
