"""RFC 9728 metadata and RFC 6750 challenges, with the authorization server given by settings or
callables, or by django-oauth-toolkit's adapter."""

from __future__ import annotations

import importlib.util

import pytest
from django.conf import settings
from django.test import RequestFactory, override_settings
from django_webmcp.oauth import ProtectedResourceMetadataView, bearer_challenge, metadata_document


def test_challenges_name_the_metadata_and_the_scope_in_a_fixed_order():
    assert bearer_challenge(
        resource_metadata="https://s/.well-known/oauth-protected-resource/mcp", realm="s"
    ) == ('Bearer resource_metadata="https://s/.well-known/oauth-protected-resource/mcp", realm="s"')
    assert bearer_challenge(realm="", error="insufficient_scope", scope="a:b") == (
        'Bearer error="insufficient_scope", scope="a:b"'
    )
    assert bearer_challenge(realm='say "hi"', error="invalid_token") == (
        'Bearer realm="say \\"hi\\"", error="invalid_token"'
    )


def servers(request):
    return [f"https://{request.get_host()}/auth"]


@override_settings(
    WEBMCP_OAUTH_RESOURCE="https://shop.example/mcp",
    WEBMCP_OAUTH_AUTHORIZATION_SERVERS="tests.test_oauth.servers",
    WEBMCP_OAUTH_SCOPES=["b", "a"],
)
def test_the_document_from_settings_and_a_callable():
    request = RequestFactory().get("/.well-known/oauth-protected-resource/mcp")
    assert metadata_document(request) == {
        "resource": "https://shop.example/mcp",
        "authorization_servers": ["https://testserver/auth"],
        "scopes_supported": ["a", "b"],
        "bearer_methods_supported": ["header"],
    }
    response = ProtectedResourceMetadataView.as_view()(request)
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.skipif(
    importlib.util.find_spec("oauth2_provider") is None or "oauth2_provider" not in settings.INSTALLED_APPS,
    reason="no django-oauth-toolkit in this settings project",
)
@override_settings(
    WEBMCP_OAUTH_RESOURCE="https://shop.example/mcp", WEBMCP_OAUTH_AUTHORIZATION_SERVERS=["https://a"]
)
def test_the_toolkit_adapter_takes_the_same_settings():
    from django_webmcp.oauth.dot import ProtectedResourceMetadataView as ToolkitView

    view = ToolkitView()
    request = RequestFactory().get("/")
    assert view.get_resource(request) == "https://shop.example/mcp"
    assert view.get_authorization_servers(request) == ["https://a"]
