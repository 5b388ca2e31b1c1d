"""`/mcp`: the site's tools for agents (MCP, Streamable HTTP), an OAuth 2.1 protected resource.

Wiring only: `django_webmcp.mcp` serves the protocol from the registry, `events.agent.mcp` runs the tools, and
`accounts.credentials` says who a bearer token belongs to (a connected agent's OAuth token, bound to
this resource, or a personal access token). An invalid token is answered here, before the protocol:
HTTP 401 with the envelope and a Bearer challenge that names the resource's metadata
(`accounts.oauth.resource`), where a client finds where the person signs in.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django_webmcp.mcp import McpAnswer, McpCall, mcp_view

from accounts.authentication import bearer
from accounts.credentials import Credential, authenticate_bearer
from accounts.lockout import note_token_failure, token_pause
from accounts.oauth.resource import metadata_url
from core.envelope import error_envelope, error_headers
from core.errors import InvalidToken, RateLimited, answer_for
from core.visitors import Visitor
from events import selectors
from events.agent import mcp as events_mcp


def _credential(request: HttpRequest) -> Credential | None:
    return getattr(request, "credential", None)


def _visitor(request: HttpRequest) -> Visitor:
    credential = _credential(request)
    return Visitor(user=credential.user) if credential is not None else Visitor()


def _call(call: McpCall) -> McpAnswer:
    credential = _credential(call.request)
    return events_mcp.answer(
        call,
        visitor=_visitor(call.request),
        scopes=credential.scopes if credential is not None else None,
        client=credential.client if credential is not None else "",
        resource_metadata=metadata_url(),
    )


def _principal(request: HttpRequest) -> str:
    visitor = _visitor(request)
    if visitor.user is None:
        return "anonymous"
    return f"{visitor.key}:v{selectors.state_version(visitor=visitor)}"


def allowed_origins() -> set[str]:
    """Browsers send an Origin; only the site's own (SITE_URL, CSRF_TRUSTED_ORIGINS) and MCP_ALLOWED_ORIGINS
    may call. Programs send none and are not affected."""
    origins = {*settings.CSRF_TRUSTED_ORIGINS, *getattr(settings, "MCP_ALLOWED_ORIGINS", [])}
    site = urlsplit(settings.SITE_URL)
    if site.scheme and site.netloc:
        origins.add(f"{site.scheme}://{site.netloc}")
    return origins


def _identity(principal: str) -> str:
    """The principal without the person's state ("user:7:v12" is "user:7")."""
    return principal.rsplit(":v", 1)[0]


_protocol = mcp_view(call=_call, principal=_principal, allowed_origins=allowed_origins, identity_of=_identity)


def _authenticate(request: HttpRequest) -> HttpResponse | None:
    raw = bearer(request.headers.get("Authorization", ""))
    if raw is None:
        return None
    wait = token_pause(request)
    if wait is not None:  # too many bad tokens from this client (accounts.lockout)
        limited = RateLimited(extra={"retryAfter": wait})
        return JsonResponse(error_envelope(limited), status=429, headers=error_headers(limited))
    credential = authenticate_bearer(raw, resource=settings.MCP_RESOURCE)
    if credential is None:
        note_token_failure(request)
        error = answer_for(InvalidToken)()
        headers = error_headers(error, resource_metadata=metadata_url())
        return JsonResponse(error_envelope(error), status=401, headers=headers)
    request.credential = credential  # type: ignore[attr-defined]
    request.user = credential.user
    return None


@csrf_exempt
def endpoint(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        refused = _authenticate(request)
        if refused is not None:
            return refused
    return _protocol(request)
