"""What differs between the Django versions django-webmcp supports (5.2 LTS, 6.0, 6.1), in one place.

- CSP nonces: Django 6.0 has Content Security Policy built in (`django.middleware.csp`, `CSP.NONCE`);
  on 5.2 a site uses django-csp (`request.csp_nonce`) or none. `csp_nonce` answers the nonce a script
  tag should carry, or None when the site's policy uses none (then no attribute is written, and no
  nonce is generated for nothing).
- `login_not_required`: the views a site's `LoginRequiredMiddleware` (Django 5.1+) must let through, such
  as `/mcp` (whose callers sign in with a bearer token, not a session) and the OAuth metadata.
"""

from __future__ import annotations

from typing import Any

import django
from django.conf import settings
from django.contrib.auth.decorators import login_not_required as _login_not_required
from django.http import HttpRequest

#: Django 6.0 or later: built-in CSP.
DJANGO_6 = django.VERSION >= (6, 0)

login_not_required = _login_not_required


def _policy_uses_nonce() -> bool:
    """Whether the built-in policy (Django 6.x) asks for a nonce anywhere."""
    from django.utils.csp import CSP  # noqa: PLC0415 (Django 6.x only)

    for name in ("SECURE_CSP", "SECURE_CSP_REPORT_ONLY"):
        policy = getattr(settings, name, None) or {}
        if any(
            CSP.NONCE in (values if isinstance(values, list | tuple) else [values])
            for values in policy.values()
        ):
            return True
    return False


def csp_nonce(request: HttpRequest | None) -> str | None:
    """The request's CSP nonce when the site's policy uses one; otherwise None."""
    if request is None:
        return None
    if DJANGO_6:
        from django.middleware.csp import get_nonce  # noqa: PLC0415 (Django 6.x only)

        nonce: Any = get_nonce(request)
        if nonce is not None and _policy_uses_nonce():
            return str(nonce)
    # django-csp (on 5.2, or kept on 6.x): its middleware puts a lazy nonce on the request, and adds it
    # to the header only once it is read.
    nonce = getattr(request, "csp_nonce", None)
    return str(nonce) if nonce else None
