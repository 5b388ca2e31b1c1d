"""What every page's template may use whatever view drew it."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def site(request: HttpRequest) -> dict[str, str]:
    return {"site_name": settings.SITE_NAME}


def brand(request: HttpRequest) -> dict[str, dict[str, str]]:
    """The layout's name of the site (base.html): `brand.name`, and the name split at its last word
    (`brand.head`, `brand.tail`), which the header sets in the brand colour ("Old <span>Town</span>";
    a one-word name is coloured whole). Not under `site_name`: Django's LoginView and LogoutView put
    the request's host there, and a view's context wins over a context processor."""
    head, _, tail = settings.SITE_NAME.rpartition(" ")
    return {"brand": {"name": settings.SITE_NAME, "head": head, "tail": tail}}
