"""Who the client is: its address, resolved once for every limit the site keeps per address.

The sign-in pause (django-axes, `AXES_CLIENT_IP_CALLABLE`), the bad-token pause, the password-reset and
sign-up limits, the client-registration limit and the anonymous write rate all count per client
address, so they all read it here. Behind `TRUSTED_PROXY_COUNT` proxies of our own (deploy/nginx.conf
is one), `REMOTE_ADDR` is the nearest proxy's address and the client is the address the outermost
trusted proxy saw: the entry that many places from the end of `X-Forwarded-For` (each proxy appends
the address it received the request from; whatever the client wrote itself is further left, and never
read). With 0 (the default: the site is reached directly) `X-Forwarded-For` is not read at all, so a
client cannot choose its own address to reset a limit.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The client's address as the nearest untrusted hop: see the module."""
    meta = request.META
    remote = meta.get("REMOTE_ADDR", "") or ""
    count = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0))
    forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
    if count <= 0 or not forwarded:
        return remote
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    if not hops:
        return remote
    # With fewer entries than trusted proxies, the leftmost is the best the proxies vouch for.
    return hops[-min(count, len(hops))]
