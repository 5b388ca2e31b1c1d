"""The `tools` permissions-policy feature: its header, the middleware and the per-view decorator."""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings
from django_webmcp.headers import InvalidAllowlist, permissions_policy, tools_policy, with_tools_member

from tests.conftest import pages_open


def test_the_member_for_each_kind_of_allowlist():
    assert permissions_policy(["self"]) == "tools=(self)"
    assert (
        permissions_policy(["self", "https://shop.example:8443"])
        == 'tools=(self "https://shop.example:8443")'
    )
    assert permissions_policy(["*"]) == "tools=*"
    assert permissions_policy([]) == "tools=()"
    with pytest.raises(InvalidAllowlist):
        permissions_policy(["shop.example"])


def test_other_members_are_kept_and_tools_replaced():
    assert with_tools_member("camera=(), tools=*", "tools=(self)") == "camera=(), tools=(self)"


@pages_open
def test_the_middleware_sets_the_default_self():
    response = Client().get("/")
    assert response["Permissions-Policy"] == "tools=(self)"


@pages_open
@override_settings(WEBMCP_PERMISSIONS_POLICY=None)
def test_none_leaves_the_header_alone():
    assert "Permissions-Policy" not in Client().get("/")


def test_a_views_own_allowlist_wins():
    @tools_policy("self", "https://partner.example")
    def view(request):
        return HttpResponse()

    response = view(RequestFactory().get("/"))
    assert response["Permissions-Policy"] == 'tools=(self "https://partner.example")'
