"""Pages for people (layer 4): parse the request, call one use case, map a refusal, render.

Every rule lives in `selectors` and `services`; these views only choose what to show. Writes answer an
htmx request with the page's refreshed main region (so the WebMCP manifest inside it follows the new
state at once) and a plain form post with a redirect (post/redirect/get).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import resolve, reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from . import ics, jsonld, selectors, services
from .choices import Mode
from .errors import AuthRequired, DomainError, EventNotFound, RegistrationNotFound
from .forms import PAGE_PARAM, EventSearchForm
from .visitors import client_mode, visitor_from_request

PAGE_SIZE = 10
#: Query parameter of the detail page that carries the list's query string, for the "back" link.
FROM_PARAM = "from"


def home(request: HttpRequest) -> HttpResponse:
    return redirect("event-list")


# ── /events/ ──────────────────────────────────────────────────────────────────────────────────


@require_GET
def event_list(request: HttpRequest) -> HttpResponse:
    form = EventSearchForm(request.GET)
    visitor = visitor_from_request(request)
    context: dict[str, Any] = {"form": form, "result": None}
    if form.is_valid():
        page = form.page
        result = selectors.search_events(
            visitor=visitor,
            mode=client_mode(request, default=Mode.UI),
            limit=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
            **form.conditions,
        )
        filters = _querydict(form.conditions)
        page_count = max(1, -(-result.total // PAGE_SIZE))
        conditions = form.described_conditions()
        for condition in conditions:
            # A link that removes just this condition: the person chooses what to drop, never the page.
            others = {k: v for k, v in form.conditions.items() if k != condition["name"]}
            condition["without_query"] = f"?{_querydict(others).urlencode()}" if others else ""
        context.update(
            result=result,
            conditions=conditions,
            filters=filters,
            page=page,
            page_count=page_count,
            page_numbers=_page_numbers(page, page_count),
            page_out_of_range=result.total > 0 and page > page_count,
            first_number=result.offset + 1,
            last_number=result.offset + result.count,
            # The detail page builds its "back to results" link from this (validated there again).
            from_query=_querydict({**form.conditions, **({PAGE_PARAM: str(page)} if page > 1 else {})}),
        )
    context["webmcp_state"] = _page_state(request, visitor)
    # Only the search form and the page links target the results; any other htmx request (e.g. the
    # WebMCP runtime refreshing the main region) gets the whole page and picks what it needs.
    partial = _wants_fragment(request) and request.htmx.target == "results"
    template = "events/event_list.html#results" if partial else "events/event_list.html"
    return _fragment_aware(render(request, template, context))


# ── /events/<id>/ ─────────────────────────────────────────────────────────────────────────────


@require_GET
def event_detail(request: HttpRequest, event_id: str) -> HttpResponse:
    return _render_detail(request, event_id, region=_wants_fragment(request))


@require_GET
def event_ics(request: HttpRequest, event_id: str) -> HttpResponse:
    details = _get_event_or_404(request, event_id)
    event = details.event
    url = request.build_absolute_uri(reverse("event-detail", kwargs={"event_id": event.public_id}))
    response = HttpResponse(ics.event_calendar(event, url=url), content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{ics.filename(event)}"'
    return response


@require_POST
def save_event(request: HttpRequest, event_id: str) -> HttpResponse:
    visitor = visitor_from_request(request, create_token=True)
    try:
        result = services.save_event(
            visitor=visitor, mode=client_mode(request, default=Mode.UI), event_id=event_id
        )
    except DomainError as error:
        return _refused(request, event_id, error)
    if result.already_saved:
        messages.info(request, _("This event was already in your saved events."))
    else:
        messages.success(request, _("Saved. You can find it under My events."))
    return _after_write(request, event_id)


@require_POST
def unsave_event(request: HttpRequest, event_id: str) -> HttpResponse:
    visitor = visitor_from_request(request)
    try:
        services.unsave_event(visitor=visitor, mode=client_mode(request, default=Mode.UI), event_id=event_id)
    except DomainError as error:
        return _refused(request, event_id, error)
    messages.success(request, _("Removed from your saved events."))
    return _after_write(request, event_id)


@require_POST
def register_event(request: HttpRequest, event_id: str) -> HttpResponse:
    visitor = visitor_from_request(request)
    try:
        result = services.register_for_event(
            visitor=visitor, mode=client_mode(request, default=Mode.UI), event_id=event_id
        )
    except DomainError as error:
        return _refused(request, event_id, error)
    if result.already_registered:
        messages.info(request, _("You were already registered for this event."))
    else:
        messages.success(request, _("You are registered. A confirmation e-mail is on its way."))
    return _after_write(request, event_id)


@require_POST
def cancel_registration(request: HttpRequest, event_id: str) -> HttpResponse:
    """Cancels only when the request says `confirm=yes`; otherwise asks first (works without JS)."""
    if request.POST.get("confirm") != "yes":
        details = _get_event_or_404(request, event_id)
        return render(
            request,
            "events/cancel_confirm.html",
            {
                "event": details.event,
                "details": details,
                # Where to return after the answer: the page the cancel button was on.
                "next": _safe_next(request) or _same_site_referer(request),
                "webmcp_state": _page_state(request, visitor_from_request(request)),
            },
        )
    visitor = visitor_from_request(request)
    try:
        result = services.cancel_registration(
            visitor=visitor, mode=client_mode(request, default=Mode.UI), event_id=event_id
        )
    except DomainError as error:
        return _refused(request, event_id, error)
    if result.already_cancelled:
        messages.info(request, _("This registration was already cancelled."))
    else:
        messages.success(request, _("Your registration is cancelled. Your seat is free for someone else."))
    return _after_write(request, event_id)


# ── /me/ ──────────────────────────────────────────────────────────────────────────────────────


@require_GET
def me(request: HttpRequest) -> HttpResponse:
    return _render_me(request, region=_wants_fragment(request))


# ── helpers ───────────────────────────────────────────────────────────────────────────────────


def _render_detail(request: HttpRequest, event_id: str, *, region: bool) -> HttpResponse:
    visitor = visitor_from_request(request)
    details = _get_event_or_404(request, event_id)
    event = details.event
    url = request.build_absolute_uri(reverse("event-detail", kwargs={"event_id": event.public_id}))
    context = {
        "event": event,
        "details": details,
        "jsonld": jsonld.event_script(event, url=url),
        "back_url": _back_to_list_url(request.GET.get(FROM_PARAM, "")),
        "login_url": _auth_url("login", event.public_id),
        "signup_url": _auth_url("signup", event.public_id),
        "webmcp_state": {
            **_page_state(request, visitor),
            "registration_open": event.registration_open,
            "registered": details.is_registered,
            "saved": details.is_saved,
            "cancelled": event.is_cancelled,
            "started": event.has_started(),
        },
    }
    template = "events/event_detail.html#region" if region else "events/event_detail.html"
    return _fragment_aware(render(request, template, context))


def _render_me(request: HttpRequest, *, region: bool) -> HttpResponse:
    visitor = visitor_from_request(request)
    try:
        registrations = selectors.list_registrations(visitor=visitor)
    except AuthRequired:
        registrations = None
    context = {
        "saved_events": selectors.list_saved(visitor=visitor),
        "registrations": registrations,
        "confirmed": [r for r in registrations or [] if r.is_active],
        "cancelled": [r for r in registrations or [] if not r.is_active],
        "webmcp_state": _page_state(request, visitor),
    }
    return _fragment_aware(render(request, "events/me.html#region" if region else "events/me.html", context))


def _wants_fragment(request: HttpRequest) -> bool:
    """An htmx request that swaps part of the page (a history restore needs the whole page)."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def _fragment_aware(response: HttpResponse) -> HttpResponse:
    """The same URL answers a page or a fragment: caches must keep them apart."""
    patch_vary_headers(response, ("HX-Request", "HX-Target", "HX-History-Restore-Request"))
    return response


def _get_event_or_404(request: HttpRequest, event_id: str) -> selectors.EventDetails:
    try:
        return selectors.get_event(
            visitor=visitor_from_request(request),
            mode=client_mode(request, default=Mode.UI),
            event_id=event_id,
        )
    except EventNotFound as error:
        raise Http404(str(error)) from error


def _page_state(request: HttpRequest, visitor) -> dict[str, Any]:
    """What the WebMCP runtime needs on every page (the detail page adds the event's state)."""
    return {
        "signed_in": visitor.is_authenticated,
        "stateVersion": selectors.state_version(visitor=visitor),
    }


def _after_write(request: HttpRequest, event_id: str) -> HttpResponse:
    """htmx: the refreshed region of the page the write came from; otherwise a redirect back to it."""
    back_to_me = urlsplit(_safe_next(request)).path == reverse("me")
    if request.htmx:
        # The region belongs to that page, so its WebMCP manifest and form attributes must be the
        # page's route, not this POST endpoint's.
        if back_to_me:
            request.resolver_match = resolve(reverse("me"))
            return _render_me(request, region=True)
        request.resolver_match = resolve(reverse("event-detail", kwargs={"event_id": event_id}))
        return _render_detail(request, event_id, region=True)
    return redirect("me") if back_to_me else _redirect_to_detail(request, event_id)


def _refused(request: HttpRequest, event_id: str, error: DomainError) -> HttpResponse:
    """A refusal from a write use case, shown as a message on the page it came from (never a 500)."""
    if isinstance(error, EventNotFound) and not isinstance(error, RegistrationNotFound):
        raise Http404(str(error)) from error
    if isinstance(error, AuthRequired) and not request.htmx:
        messages.info(request, _("Please sign in first; then you can do this."))
        return redirect_to_login(reverse("event-detail", kwargs={"event_id": event_id}))
    messages.error(request, refusal_message(error))
    return _after_write(request, event_id)


REFUSALS = {
    "EVENT_FULL": gettext_lazy("Sorry, this event is full: there are no seats left."),
    "REGISTRATION_CLOSED": gettext_lazy(
        "This event has already started, so registrations can no longer be made or cancelled."
    ),
    "EVENT_CANCELLED": gettext_lazy("This event has been cancelled."),
    "SIGN_IN_REQUIRED": gettext_lazy("Please sign in first; then you can do this."),
    "REGISTRATION_NOT_FOUND": gettext_lazy("You have no registration for this event."),
    "RATE_LIMITED": gettext_lazy("Too many requests. Please wait a moment and try again."),
    "EVENT_SERVICE_UNAVAILABLE": gettext_lazy(
        "The event service is temporarily unavailable. Please try again later."
    ),
}


def refusal_message(error: DomainError) -> str:
    return str(REFUSALS.get(error.reason, _("Sorry, that did not work. Please try again.")))


def _redirect_to_detail(request: HttpRequest, event_id: str) -> HttpResponse:
    """Back to the detail page, keeping its query ("back to results") when the form came from it."""
    path = reverse("event-detail", kwargs={"event_id": event_id})
    for candidate in (_safe_next(request), _same_site_referer(request)):
        parts = urlsplit(candidate)
        if candidate and parts.path == path and parts.query:
            return redirect(f"{path}?{parts.query}")
    return redirect(path)


def _same_site_referer(request: HttpRequest) -> str:
    """The Referer's path and query when it is a page of this site, else ""."""
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        parts = urlsplit(referer)
        return f"{parts.path}?{parts.query}" if parts.query else parts.path
    return ""


def _safe_next(request: HttpRequest) -> str:
    candidate = request.POST.get("next", "") or request.GET.get("next", "")
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return ""


def _back_to_list_url(raw: str) -> str:
    """The list URL with the search the visitor came from, if that search is valid; else the bare list."""
    base = reverse("event-list")
    if not raw:
        return base
    form = EventSearchForm(QueryDict(raw))
    if not form.is_valid():
        return base
    params = {**form.conditions, **({PAGE_PARAM: str(form.page)} if form.page > 1 else {})}
    return f"{base}?{_querydict(params).urlencode()}" if params else base


def _auth_url(url_name: str, event_id: str) -> str:
    """Sign-in or sign-up URL that comes back to the event's page."""
    query = _querydict({"next": reverse("event-detail", kwargs={"event_id": event_id})})
    return f"{reverse(url_name)}?{query.urlencode(safe='/')}"


def _page_numbers(page: int, page_count: int, *, around: int = 2) -> list[int | None]:
    """Page links to show: the first, the last and those near `page`; None marks a gap."""
    shown = sorted({1, page_count, *range(max(1, page - around), min(page_count, page + around) + 1)})
    numbers: list[int | None] = []
    for number in shown:
        if numbers and number - (numbers[-1] or 0) > 1:
            numbers.append(None)
        numbers.append(number)
    return numbers


def _querydict(params: dict[str, str]) -> QueryDict:
    query = QueryDict(mutable=True)
    for key, value in params.items():
        query[key] = value
    return query
