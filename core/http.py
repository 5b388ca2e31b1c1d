"""Whether a URL a request carries (`next`, the Referer) is a page of this site: Django's check, asked
in one way everywhere, so an open redirect cannot creep in through one caller's variant of it."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def is_same_site(request: HttpRequest, url: str) -> bool:
    """`url` is relative or on this request's host, and on https when the request is."""
    return bool(url) and url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
