"""The person's side of signing an agent in: the consent page, and Connected agents.

The consent page names the client as the server knows it (its name, the host of its client id, the host
it returns to), marks a dynamically registered client "unverified" (anyone can register any name), warns
when it returns to this computer, and lists the scopes in words. Its Content-Security-Policy lets the
form reach the client's redirect (Chromium applies `form-action` to the redirect after a POST): on this
page only, and only that origin.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.csp import CSP
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_application_model
from oauth2_provider.oauth2_backends import _add_iss_to_redirect
from oauth2_provider.views import AuthorizationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from .clients import is_loopback
from .grants import client_label, list_connected_agents, revoke_connected_agent
from .validator import foreign_resources


def redirect_source(uri: str) -> str:
    """The CSP source of a redirect URI: its origin, or its scheme for a desktop client's (`cursor:`)."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"


class ConsentView(AuthorizationView):
    template_name = "accounts/oauth_consent.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        """What the code could never be exchanged for is refused before the person is asked: another
        resource (RFC 8707), or PKCE other than S256 (the toolkit would refuse it only after Allow)."""
        if foreign_resources(request.GET.getlist("resource")):
            only = f"This server issues tokens for {settings.MCP_RESOURCE} only."
            return self._refuse(request, "invalid_target", only)
        method = request.GET.get("code_challenge_method")
        if method is not None and method != "S256":
            return self._refuse(request, "invalid_request", 'The only code_challenge_method is "S256".')
        return super().get(request, *args, **kwargs)

    def _refuse(self, request: HttpRequest, code: str, description: str) -> HttpResponse:
        try:
            _scopes, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        application = get_application_model().objects.get(client_id=credentials["client_id"])
        reason = CustomOAuth2Error(error=code, description=description, state=credentials.get("state"))
        refusal = OAuthToolkitError(error=reason, redirect_uri=credentials["redirect_uri"])
        return self.error_response(refusal, application)

    def error_response(self, error: Any, application: Any, **kwargs: Any) -> HttpResponse:
        """Errors that go back to the client carry `iss` too (RFC 9207), Deny's `access_denied` included."""
        response = super().error_response(error, application, **kwargs)
        location = response.get("Location") if response.status_code in (301, 302) else None
        if location:
            response["Location"] = _add_iss_to_redirect(location, settings.OAUTH_ISSUER)
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        redirect_uri = context.get("redirect_uri") or ""
        if application is not None:
            Application = get_application_model()
            client_id = application.client_id
            context.update(
                client_label=client_label(application),
                client_host=urlsplit(client_id).hostname if "://" in client_id else "",
                redirect_host=urlsplit(redirect_uri).hostname or urlsplit(redirect_uri).scheme,
                unverified=application.registration_source == Application.RegistrationSource.DCR,
                returns_here=is_loopback(urlsplit(redirect_uri).hostname),
            )
        return context

    def render_to_response(self, context: dict[str, Any], **kwargs: Any) -> HttpResponse:
        response = super().render_to_response(context, **kwargs)
        redirect_uri = context.get("redirect_uri") or self.request.POST.get("redirect_uri", "")
        if redirect_uri:
            policy = dict(settings.SECURE_CSP)
            policy["form-action"] = [CSP.SELF, redirect_source(redirect_uri)]
            response._csp_config = policy
        return response


consent = never_cache(ConsentView.as_view())


@never_cache
@login_required
def connected_agents(request: HttpRequest) -> HttpResponse:
    return render(
        request, "accounts/connected_agents.html", {"agents": list_connected_agents(user=request.user)}
    )


@login_required
@require_POST
def revoke_agent(request: HttpRequest, application_id: int) -> HttpResponse:
    if revoke_connected_agent(user=request.user, application_id=application_id):
        messages.success(request, _("Disconnected: that agent can no longer act for you."))
    return redirect("connected-agents")
