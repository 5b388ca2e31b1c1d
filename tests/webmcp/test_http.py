"""The site's one same-site check (`django_webmcp.http`): what a sign-in's `next`, a page's Referer and a tool
call's calling page may point at."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from django_webmcp.http import is_same_site, same_site_path

pytestmark = pytest.mark.unit

factory = RequestFactory()


@pytest.mark.parametrize(
    ("url", "secure", "expected"),
    [
        ("/me/", False, True),
        ("/events/?q=a", True, True),
        ("http://testserver/me/", False, True),
        ("https://testserver/me/", True, True),
        ("http://testserver/me/", True, False),  # a page served on https never sends on to http
        ("https://elsewhere.example/me/", False, False),
        ("//elsewhere.example/me/", False, False),
        ("/\\elsewhere.example/me/", False, False),  # browsers read a backslash as a slash
        ("javascript:alert(1)", False, False),
        ("", False, False),
    ],
)
def test_a_url_is_same_site_when_relative_or_on_this_host_and_scheme(
    url: str, secure: bool, expected: bool
) -> None:
    request = factory.get("/", secure=secure)
    assert is_same_site(request, url) is expected


def test_the_same_site_path_keeps_the_query_and_drops_the_host() -> None:
    request = factory.get("/")
    assert (
        same_site_path(request, "http://testserver/events/?location=taipei#top") == "/events/?location=taipei"
    )
    assert same_site_path(request, "http://testserver/me/") == "/me/"
    assert same_site_path(request, "https://elsewhere.example/me/") == ""
