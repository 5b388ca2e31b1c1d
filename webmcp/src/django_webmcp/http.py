"""Whether a URL a request carries (a tool call's calling page, a form's `next`, the Referer) is a page
of this site: Django's `url_has_allowed_host_and_scheme`, asked in one way everywhere, so an open
redirect cannot creep in through one caller's variant of it.

It lives here, the lowest package that needs it (the calling page of a tool call), because webmcp
imports nothing of the site and everything above it (core, the apps) may import webmcp.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def is_same_site(request: HttpRequest, url: str) -> bool:
    """`url` is relative or on this request's host, and on https when the request is."""
    return bool(url) and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )


def same_site_path(request: HttpRequest, url: str) -> str:
    """The path and query of `url` when it is a page of this site, else ""."""
    if not is_same_site(request, url):
        return ""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}" if parts.query else parts.path
