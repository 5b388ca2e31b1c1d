"""One predicate hides a tool from a caller and refuses the caller's call of it."""

from __future__ import annotations

from django.test import override_settings
from django_webmcp.registry import registry
from django_webmcp.scopes import allowed, missing_scope, refusal


def test_who_may_call_what():
    get_item, reserve = registry.get("get_item"), registry.get("reserve_item")
    assert missing_scope(get_item, None) is None  # readable anonymously
    assert missing_scope(reserve, None) == "items:write"  # needs a signed-in person
    assert missing_scope(get_item, frozenset()) == "items:read"  # a token without the scope
    assert missing_scope(reserve, frozenset({"items:read", "items:write"})) is None
    assert [tool.name for tool in allowed([get_item, reserve], frozenset({"items:read"}))] == ["get_item"]


@override_settings(WEBMCP_OAUTH_REALM="")
def test_the_refusals_are_401_without_a_token_and_403_with_a_narrow_one():
    reserve = registry.get("reserve_item")
    status, envelope, headers = refusal(reserve, None, resource_metadata="https://m")
    assert status == 401 and envelope["code"] == "AUTH_REQUIRED"
    assert headers["WWW-Authenticate"] == 'Bearer resource_metadata="https://m", scope="items:write"'
    status, envelope, headers = refusal(reserve, frozenset({"items:read"}))
    assert status == 403 and 'error="insufficient_scope"' in headers["WWW-Authenticate"]
    assert refusal(reserve, frozenset({"items:write"})) is None
