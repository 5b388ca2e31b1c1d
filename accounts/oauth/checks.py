"""A production issuer is https: tokens and codes must not cross the network in the clear, and clients
refuse an http authorization server outside development. A deploy check (`manage.py check --deploy`,
the first deployment step in README): the site's own tooling runs the server with DEBUG off and an
http loopback address (the fault runs, the scale-out tests), which must not be refused."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Tags, register


@register(Tags.security, deploy=True)
def issuer_is_https(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    if settings.DEBUG or settings.OAUTH_ISSUER.startswith("https://"):
        return []
    return [
        Error(
            f"The OAuth issuer {settings.OAUTH_ISSUER!r} is not https.",
            hint="Set SITE_URL to the site's https address (DEBUG=1 allows http://127.0.0.1:8000).",
            id="accounts.E001",
        )
    ]
