"""Sign up (sign in, sign out and password reset are Django's own views with our templates)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import REDIRECT_FIELD_NAME, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordResetView
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST

from core.http import is_same_site

from .forms import AccessTokenForm, SignUpForm
from .lockout import note_reset, reset_pause
from .tokens import TokenRefused, create_access_token, list_access_tokens, revoke_access_token


@sensitive_post_parameters("password1", "password2")
def signup(request: HttpRequest) -> HttpResponse:
    next_url = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME, "")
    if not is_same_site(request, next_url):
        next_url = ""
    if request.user.is_authenticated:
        return redirect(next_url or settings.LOGIN_REDIRECT_URL)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="accounts.backends.SessionUserBackend")
        messages.success(request, _("Welcome! Your account is ready and you are signed in."))
        return redirect(next_url or settings.LOGIN_REDIRECT_URL)
    return render(request, "registration/signup.html", {"form": form, "next": next_url})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def access_tokens(request: HttpRequest) -> HttpResponse:
    """The person's tokens and the form for a new one. A new token is shown once, on the answer to
    its POST only (never in a message, a cookie or a log)."""
    form = AccessTokenForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            token, raw = create_access_token(
                user=request.user,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                days=form.cleaned_data["days"],
            )
        except TokenRefused as refusal:
            form.add_error(None, str(refusal))
        else:
            return render(request, "accounts/token_created.html", {"token": token, "raw": raw})
    return render(
        request,
        "accounts/access_tokens.html",
        {"form": form, "tokens": list_access_tokens(user=request.user)},
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def revoke_token(request: HttpRequest, token_id: int) -> HttpResponse:
    if revoke_access_token(user=request.user, token_id=token_id):
        messages.success(request, _("The token is revoked: it no longer works anywhere."))
    return redirect("access-tokens")


def password_reset(request: HttpRequest) -> HttpResponseBase:
    """Django's password reset, limited like sign-in (accounts.lockout): the same answer whether or not
    an account has the address, and a pause page once a client or an address asked too often."""
    if request.method == "POST":
        email = request.POST.get("email", "")
        wait = reset_pause(request, email)
        if wait is not None:
            response = render(
                request, "registration/password_reset_paused.html", {"pause_minutes": wait // 60}, status=429
            )
            response["Retry-After"] = str(wait)
            return response
        note_reset(request, email)
    return PasswordResetView.as_view()(request)
