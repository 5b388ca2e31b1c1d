"""`/mcp`: the site's tools for headless agents (MCP, Streamable HTTP), with personal access tokens.

Wiring only: `webmcp.mcp` serves the protocol from the registry, `events.agent.mcp` runs the tools, and
`accounts.tokens` says who a bearer token belongs to. An invalid token is answered here, before the
protocol: HTTP 401 with the envelope and a Bearer challenge.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from accounts.authentication import bearer
from accounts.lockout import note_token_failure, token_pause
from accounts.tokens import authenticate_token
from core.envelope import error_envelope, error_headers
from core.errors import InvalidToken, RateLimited
from core.visitors import Visitor
from events import selectors
from events.agent import mcp as events_mcp
from webmcp.mcp import McpAnswer, McpCall, mcp_view


def _visitor(request: HttpRequest) -> Visitor:
    token = getattr(request, "access_token", None)
    return Visitor(user=token.user) if token is not None else Visitor()


def _call(call: McpCall) -> McpAnswer:
    token = getattr(call.request, "access_token", None)
    scopes = frozenset(token.scopes) if token is not None else None
    return events_mcp.answer(call, visitor=_visitor(call.request), scopes=scopes)


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


_protocol = mcp_view(call=_call, principal=_principal, allowed_origins=allowed_origins)


def _authenticate(request: HttpRequest) -> HttpResponse | None:
    raw = bearer(request.headers.get("Authorization", ""))
    if raw is None:
        return None
    wait = token_pause(request)
    if wait is not None:  # too many bad tokens from this client (accounts.lockout)
        limited = RateLimited(extra={"retryAfter": wait})
        return JsonResponse(error_envelope(limited), status=429, headers=error_headers(limited))
    token = authenticate_token(raw)
    if token is None:
        note_token_failure(request)
        error = InvalidToken()
        return JsonResponse(error_envelope(error), status=401, headers=error_headers(error))
    request.access_token = token  # type: ignore[attr-defined]
    request.user = token.user
    return None


@csrf_exempt
async def endpoint(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        refused = await sync_to_async(_authenticate)(request)
        if refused is not None:
            return refused
    return await _protocol(request)
