"""Who may be a client: the redirect URIs a client may name, client ID metadata documents, and dynamic
registration (rate-limited, and pruned when never used).

A redirect URI is `https`, `http` on a loopback address only (a desktop client's own listener,
RFC 8252 §7.3), or the private scheme of a desktop client we name in `OAUTH_APP_SCHEMES`
(`cursor://…`). Anything else (`javascript:`, `data:`, `http://` to another host) is refused before a
row is written.
"""

from __future__ import annotations

import ipaddress
import json
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model
from oauth2_provider.views import DynamicClientRegistrationManagementView, DynamicClientRegistrationView
from rest_framework.throttling import SimpleRateThrottle

from core.clients import client_address

LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not name `uri` as a redirect URI, or None when it may."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return f"{uri!r} is not a URI"
    scheme = parts.scheme.lower()
    if parts.fragment:
        return f"{uri!r} has a fragment"
    if scheme == "https" and parts.hostname:
        return None
    if scheme == "http" and is_loopback(parts.hostname):
        return None
    if scheme in settings.OAUTH_APP_SCHEMES and parts.netloc:
        return None
    return f"{uri!r}: a redirect URI is https, http on a loopback address, or a desktop client's own scheme"


def public_client(metadata: dict[str, Any]) -> dict[str, Any]:
    """A metadata document that offers `none` among its token endpoint auth methods is read as a public
    client's (ChatGPT's declares `private_key_jwt` and also offers `none`); django-oauth-toolkit
    accepts only `token_endpoint_auth_method: none`."""
    offered = metadata.get("token_endpoint_auth_methods_supported")
    declared = metadata.get("token_endpoint_auth_method", "none")
    methods = [
        *(offered if isinstance(offered, list) else []),
        *(declared if isinstance(declared, list) else []),
    ]
    if declared != "none" and "none" in methods:
        return {**metadata, "token_endpoint_auth_method": "none"}
    return metadata


def check_redirect_uris(metadata: dict[str, Any]) -> None:
    uris = metadata.get("redirect_uris")
    for uri in uris if isinstance(uris, list) else []:
        problem = isinstance(uri, str) and redirect_uri_problem(uri)
        if problem:
            raise CIMDError(problem)


class ClientMetadataFetcher(SafeMetadataFetcher):
    """django-oauth-toolkit's SSRF-hardened fetch (https only, every resolved address public, no
    redirects, `CIMD_MAX_DOCUMENT_SIZE`, `CIMD_FETCH_TIMEOUT_SECONDS`), then our public-client and
    redirect-URI rules."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        metadata, max_age = super().fetch(client_id)
        metadata = public_client(metadata)
        check_redirect_uris(metadata)
        return metadata, max_age


class RegistrationThrottle(SimpleRateThrottle):
    """Registrations per client address, counted in the cache like the write rate."""

    scope = "oauth-registration"

    def get_ident(self, request: Any) -> str:
        return client_address(request)

    def get_rate(self) -> str:
        return settings.OAUTH_REGISTRATION_RATE

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def _registration_error(error: str, description: str, status: int = 400, **headers: str) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status, headers=headers)


def metadata_problem(body: bytes) -> JsonResponse | None:
    """The refusal of a registration's or an update's metadata by our rules, or None to let
    django-oauth-toolkit read it (and refuse what it refuses): every redirect URI by
    `redirect_uri_problem`, and only the grant types this server issues tokens by
    (`OAUTH2_GRANT_TYPES_SUPPORTED`: `client_credentials`, `password` and `implicit` would register a
    client whose tokens are refused everywhere). One rule for `POST /register` and
    `PUT /register/<client_id>`."""
    try:
        metadata = json.loads(body or b"{}")
    except ValueError:
        return None
    if not isinstance(metadata, dict):
        return None
    uris = metadata.get("redirect_uris")
    for uri in uris if isinstance(uris, list) else []:
        problem = isinstance(uri, str) and redirect_uri_problem(uri)
        if problem:
            return _registration_error("invalid_redirect_uri", problem)
    grants = metadata.get("grant_types")
    # The toolkit's settings dict is typed with object values; this one is a list of grant names.
    issued: list[str] = settings.OAUTH2_PROVIDER["OAUTH2_GRANT_TYPES_SUPPORTED"]  # type: ignore[assignment]
    refused = [grant for grant in grants if grant not in issued] if isinstance(grants, list) else []
    if refused:
        return _registration_error(
            "invalid_client_metadata",
            f"Unsupported grant_types {refused!r}: this server issues tokens by {' and '.join(issued)} only",
        )
    return None


_register = DynamicClientRegistrationView.as_view()


@csrf_exempt
def register(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """RFC 7591 registration, open to anyone (Cursor registers before anyone signs in), within the rate
    and the redirect-URI rule; the rest is django-oauth-toolkit's."""
    if request.method == "POST":
        throttle = RegistrationThrottle()
        # It reads only request.META (the client address), which a Django request has too.
        if not throttle.allow_request(request, None):  # type: ignore[arg-type]
            wait = int(throttle.wait() or 60)
            return _registration_error(
                "slow_down", "Too many registrations from this address.", 429, **{"Retry-After": str(wait)}
            )
        refused = metadata_problem(request.body)
        if refused is not None:
            return refused
    return _register(request, *args, **kwargs)


class ClientManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 read, update and delete of a registered client, with its registration token; an update
    is held to the same rules as a registration (`metadata_problem`), once its token is checked."""

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        checked = self._authenticate_registration_request(request, client_id)
        if isinstance(checked, HttpResponse):
            return checked
        refused = metadata_problem(request.body)
        if refused is not None:
            return refused
        return super().put(request, client_id, *args, **kwargs)


def prune_unused_clients(*, now=None) -> int:
    """Delete the dynamically registered clients nobody has used for `OAUTH_UNUSED_CLIENT_DAYS`: made
    before then, and no person's token or refresh token made since. Returns how many went."""
    Application = get_application_model()
    cutoff = (now or timezone.now()) - timedelta(days=settings.OAUTH_UNUSED_CLIENT_DAYS)
    used_tokens = get_access_token_model().objects.filter(
        application=OuterRef("pk"), user__isnull=False, created__gte=cutoff
    )
    used_refresh = get_refresh_token_model().objects.filter(application=OuterRef("pk"), created__gte=cutoff)
    unused = Application.objects.filter(
        Q(registration_source=Application.RegistrationSource.DCR), created__lt=cutoff
    ).filter(~Exists(used_tokens), ~Exists(used_refresh))
    ids = list(unused.values_list("pk", flat=True))
    Application.objects.filter(pk__in=ids).delete()  # their registration tokens go with them
    return len(ids)
