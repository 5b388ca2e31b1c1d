"""Sign up (sign in, sign out and password reset are Django's own views with our templates); the
reminder setting (My events) and the reminders' one-click unsubscribe."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import auth, messages
from django.contrib.auth import REDIRECT_FIELD_NAME, get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordResetView
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.dateparse import parse_datetime
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST
from django_webmcp.http import is_same_site

from core.visitors import Mode
from events.choices import NotificationKind, NotificationStatus, RegistrationStatus, StaffRole, WaitlistStatus
from events.mail.messages import reminders_on, unsubscribed_user_id

from . import privacy
from .forms import AccessTokenForm, DeleteAccountForm, SignUpForm
from .lockout import note_reset, note_sign_up, reset_pause, sign_in_paused, sign_up_pause
from .models import Preferences
from .tokens import TokenRefused, create_access_token, list_access_tokens, revoke_access_token


@sensitive_post_parameters("password1", "password2")
def signup(request: HttpRequest) -> HttpResponse:
    next_url = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME, "")
    if not is_same_site(request, next_url):
        next_url = ""
    if request.user.is_authenticated:
        return redirect(next_url or settings.LOGIN_REDIRECT_URL)
    if request.method == "POST":
        wait = sign_up_pause(request)
        if wait is not None:
            response = render(
                request, "registration/signup_paused.html", {"pause_minutes": max(1, wait // 60)}, status=429
            )
            response["Retry-After"] = str(wait)
            return response
        note_sign_up(request)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid() and form.taken:
        form.tell_taken()
        return render(request, "registration/signup_sent.html", {"email": form.cleaned_data["email"]})
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
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
    # The mail's site_name is the setting, not Django's default (the request's host name).
    return PasswordResetView.as_view(extra_email_context={"site_name": settings.SITE_NAME})(request)


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def reminder_settings(request: HttpRequest) -> HttpResponse:
    """The reminder setting, a checkbox: on (checked) or off. My events loads this form into its page
    after the page (htmx), so the page itself reads nothing more for it; without JavaScript its link
    opens the form on a page of its own. A plain POST returns to My events, htmx's gets the form back."""
    htmx = bool(getattr(request, "htmx", False))
    saved = ""
    if request.method == "POST":
        on = request.POST.get("reminders") == "on"
        Preferences.set_reminders(request.user, on=on)
        saved = _("You will get a reminder before each of your events.") if on else _("Reminders are off.")
        if not htmx:
            messages.success(request, saved)
            return redirect("me")
    else:
        on = reminders_on(request.user)
    template = "accounts/reminders_setting.html" + ("#form" if htmx else "")
    response = render(request, template, {"reminders": on, "saved": saved})
    patch_vary_headers(response, ("HX-Request",))  # the same URL answers a page or the form alone
    return response


@csrf_exempt  # the signed token is the authority: a mail client's one-click POST has no CSRF token
@never_cache
@require_http_methods(["GET", "POST"])
def reminders_unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """A reminder's List-Unsubscribe link (RFC 8058): a POST (the mail client's one click, or the
    button here) turns the named person's reminders off, signed in or not; a GET only shows the button,
    so a link scanner that follows the link changes nothing."""
    user_id = unsubscribed_user_id(token)
    person = get_user_model().objects.filter(pk=user_id).first() if user_id is not None else None
    if person is None:
        return render(request, "accounts/reminders_unsubscribe.html", {"invalid": True}, status=404)
    if request.method == "POST":
        Preferences.set_reminders(person, on=False)
        return render(request, "accounts/reminders_unsubscribed.html")
    return render(request, "accounts/reminders_unsubscribe.html", {"already_off": not reminders_on(person)})


# ── the person's data: see it, take it, delete it; the privacy page ─────────────────────────────

#: The keys of the export whose values are times (ISO strings there; shown as dates on the page).
TIME_KEYS = {"date_joined", "last_login", "time", "last_attempt"}
#: How many of the newest Activity rows the page shows (the JSON has them all).
ACTIVITY_SHOWN = 50
#: The export's codes the page shows by their names in the person's language: section → key → choices.
NAMED_CODES: dict[str, dict[str, Any]] = {
    "registrations": {"status": RegistrationStatus},
    "waiting_lists": {"status": WaitlistStatus},
    "notifications": {"kind": NotificationKind, "status": NotificationStatus},
    "event_roles": {"role": StaffRole},
    "activity": {"mode": Mode},
}


def _readable(value: Any, key: str = "") -> Any:
    """The export with its times as datetimes, for the page's date filters."""
    if isinstance(value, dict):
        return {name: _readable(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_readable(item) for item in value]
    if isinstance(value, str) and (key in TIME_KEYS or key.endswith("_at")):
        return parse_datetime(value) or value
    return value


@never_cache
@login_required
@require_http_methods(["GET"])
def my_data(request: HttpRequest) -> HttpResponse:
    """Everything the site keeps about the person (`export_personal_data`), readable; the same as
    JSON at /api/me/export (the page's "Download JSON")."""
    data = _readable(privacy.export_personal_data(user=request.user))
    for section, keys in NAMED_CODES.items():
        for row in data.get(section, []):
            for key, choices in keys.items():
                if row.get(key) in choices.values:
                    row[key] = choices(row[key]).label
    activity = data["activity"]
    return render(
        request,
        "accounts/my_data.html",
        {"data": data, "activity_shown": activity[::-1][:ACTIVITY_SHOWN], "activity_count": len(activity)},
    )


@never_cache
@login_required
@sensitive_post_parameters("password")
@require_http_methods(["GET", "POST"])
def delete_account(request: HttpRequest) -> HttpResponse:
    """Delete my account: the person's password once more (a wrong one changes nothing and counts
    towards the sign-in pause), then `accounts.privacy.delete_account`, sign-out and the event list.
    The last superuser is refused, on the page before anything is asked."""
    user = request.user
    last_superuser = privacy.is_last_superuser(user)
    form = DeleteAccountForm(request.POST if request.method == "POST" else None, user=user, request=request)
    if request.method == "POST" and not last_superuser:
        if form.is_valid():
            try:
                privacy.delete_account(user=user, language=get_language())
            except privacy.LastSuperuser as refusal:  # another superuser left meanwhile
                form.add_error(None, str(refusal))
            else:
                auth.logout(request)
                messages.success(
                    request,
                    _("Your account and its personal data are deleted. A last e-mail confirms it."),
                )
                return redirect("event-list")
        elif form.paused:
            return sign_in_paused(request)
    status = 200 if request.method == "GET" else (409 if last_superuser else 400)
    return render(
        request,
        "accounts/delete_account.html",
        {"form": form, "last_superuser": last_superuser, "refusal": privacy.LastSuperuser()},
        status=status,
    )


def privacy_page(request: HttpRequest) -> HttpResponse:
    """What the site keeps, why, for how long (the retention settings), and how to take it or delete it."""
    return render(
        request,
        "privacy.html",
        {
            "sign_in_days": settings.RETENTION_SIGN_IN_ATTEMPTS_DAYS,
            "visitor_token_days": settings.RETENTION_VISITOR_TOKENS_DAYS,
            "notification_days": settings.RETENTION_NOTIFICATIONS_DAYS,
            "answers_days": settings.RETENTION_ANSWERS_DAYS,
            "payments_days": settings.RETENTION_PAYMENTS_DAYS,
            "session_days": settings.SESSION_COOKIE_AGE // 86400,
            "idempotency_hours": round(settings.IDEMPOTENCY_KEY_HOURS),
        },
    )
