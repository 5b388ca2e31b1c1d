"""Pages for people (layer 4): parse the request, call one use case, map a refusal, render.

Every rule lives in `selectors` and `services`; these views only choose what to show. Writes answer an
htmx request with the page's refreshed main region (so the WebMCP manifest inside it follows the new
state at once) and a plain form post with a redirect (post/redirect/get).

The same routes answer the page's WebMCP tool calls (`X-WebMCP-Tool`): the input is validated by the
API's serializer, the use case runs once, and one answer carries the region the person sees and the
result the agent gets (`webmcp.responses`); a refusal is the JSON envelope, the page left as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import resolve, reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST
from rest_framework.serializers import Serializer

from webmcp.responses import (
    MalformedToolInput,
    calling_page,
    tool_call,
    tool_input,
    tool_refusal,
    with_tool_result,
)

from . import ics, jsonld, policies, selectors, services
from .activity import record_refusal
from .api.envelope import current_state_version, error_envelope, error_headers
from .api.inputs import validated_input
from .api.serializers import (
    CancelOutput,
    EventRefInput,
    EventSearchInput,
    LeaveWaitlistOutput,
    NoInput,
    RegistrationOutput,
    SaveOutput,
    SearchOutput,
    UnsaveOutput,
    WaitlistOutput,
)
from .api.throttling import check_write_rate
from .choices import Mode
from .errors import AuthRequired, DomainError, EventNotFound, InvalidInput, RegistrationNotFound
from .forms import PAGE_PARAM, EventSearchForm
from .models import Registration
from .tools import detail_state
from .visitors import Visitor, client_mode, visitor_from_request

if TYPE_CHECKING:
    from django_htmx.middleware import HtmxDetails
    from django_stubs_ext import StrOrPromise

    class HtmxHttpRequest(HttpRequest):
        """A request that went through django-htmx's middleware (every page here does)."""

        htmx: HtmxDetails


PAGE_SIZE = selectors.DEFAULT_PAGE_SIZE
#: Query parameter of the detail page that carries the list's query string, for the "back" link.
FROM_PARAM = "from"


def home(request: HtmxHttpRequest) -> HttpResponse:
    return redirect("event-list")


# ── /events/ ──────────────────────────────────────────────────────────────────────────────────


@require_GET
def event_list(request: HtmxHttpRequest) -> HttpResponse:
    visitor = visitor_from_request(request)
    if tool_call(request):
        return _search_tool_call(request, visitor)
    form = EventSearchForm(request.GET)
    mode = client_mode(request, default=Mode.UI)
    context = _list_context(request, visitor, form, mode=mode)
    # Only the search form and the page links target the results; any other htmx request gets the
    # whole page and picks what it needs.
    partial = _wants_fragment(request) and request.htmx.target == "results"
    template = "events/event_list.html#results" if partial else "events/event_list.html"
    return _fragment_aware(render(request, template, context))


def _search_tool_call(request: HtmxHttpRequest, visitor: Visitor) -> HttpResponse:
    """`search_events` from the page: judged on its own input alone (an omitted condition is no
    condition, whatever the form or the URL held), shown in the form and the list it answers with."""
    try:
        conditions = EventSearchForm.conditions_from(_tool_input(request, EventSearchInput))
    except DomainError as error:
        return _tool_refusal(request, error, action="search_events", mode=Mode.AGENT)
    form = EventSearchForm(_querydict(conditions))
    context = _list_context(request, visitor, form, mode=Mode.AGENT)
    state = {"state_version": context["webmcp_state"]["stateVersion"]}
    result = SearchOutput(context["result"], context=state).data
    url = reverse("event-list") + (f"?{_querydict(conditions).urlencode()}" if conditions else "")
    response = render(request, "events/event_list.html#search_answer", context)
    return with_tool_result(response, result, push_url=url)


def _list_context(
    request: HtmxHttpRequest,
    visitor: Visitor,
    form: EventSearchForm,
    *,
    mode: Mode | None,
) -> dict[str, Any]:
    """Everything the list page shows for `form`'s search (`mode=None`: a redraw, not recorded)."""
    context: dict[str, Any] = {"form": form, "result": None}
    if form.is_valid():
        page = form.page
        result = selectors.search_events(
            visitor=visitor,
            mode=mode,
            limit=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
            with_seats=True,  # the cards show seats and "Full"
            **form.conditions,
        )
        filters = _querydict(form.conditions)
        page_count = max(1, -(-result.total // PAGE_SIZE))
        described = form.described_conditions()
        for condition in described:
            # A link that removes just this condition: the person chooses what to drop, never the page.
            others = {k: v for k, v in form.conditions.items() if k != condition["name"]}
            condition["without_query"] = f"?{_querydict(others).urlencode()}" if others else ""
        context.update(
            result=result,
            conditions=described,
            filters=filters,
            page=page,
            page_count=page_count,
            page_numbers=_page_numbers(page, page_count),
            page_out_of_range=result.total > 0 and page > page_count,
            first_number=result.offset + 1,
            last_number=result.offset + result.count,
            # The detail page builds its "back to results" link from this (validated there again).
            from_query=_from_query(form),
        )
    context["webmcp_state"] = _page_state(request, visitor)
    return context


def _card_context(request: HtmxHttpRequest, event_id: str, query: str) -> dict[str, Any]:
    """One event's card as the list page at `query` shows it, with the page's manifest."""
    visitor = visitor_from_request(request)
    details = selectors.get_event_details(visitor=visitor, mode=None, event_id=event_id)
    form = EventSearchForm(QueryDict(query))
    return {
        "event": details.event,
        "saved_ids": {details.event.public_id} if details.is_saved else set(),
        "from_query": _from_query(form) if form.is_valid() else None,
        "webmcp_state": _page_state(request, visitor),
    }


def _from_query(form: EventSearchForm) -> QueryDict:
    """The list's conditions and page, from which the event page builds its "back to results" link."""
    page = form.page
    return _querydict({**form.conditions, **({PAGE_PARAM: str(page)} if page > 1 else {})})


# ── /events/<id>/ ─────────────────────────────────────────────────────────────────────────────


@require_GET
def event_detail(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _render_detail(request, event_id, region=_wants_fragment(request))


@require_GET
def event_ics(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    details = _get_event_or_404(request, event_id)
    event = details.event
    url = request.build_absolute_uri(reverse("event-detail", kwargs={"event_id": event.public_id}))
    response = HttpResponse(ics.event_calendar(event, url=url), content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{ics.filename(event)}"'
    return response


@require_POST
def save_event(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(
        request,
        event_id,
        services.save_event,
        SaveOutput,
        done=gettext_lazy("Saved. You can find it under My events."),
        unchanged=gettext_lazy("This event was already in your saved events."),
        create_token=True,
    )


@require_POST
def unsave_event(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(
        request,
        event_id,
        services.unsave_event,
        UnsaveOutput,
        done=gettext_lazy("Removed from your saved events."),
        unchanged=gettext_lazy("Removed from your saved events."),
    )


@require_POST
def register_event(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(
        request,
        event_id,
        services.register_event,
        RegistrationOutput,
        done=gettext_lazy("You are registered. A confirmation e-mail is on its way."),
        unchanged=gettext_lazy("You were already registered for this event."),
    )


@require_POST
def cancel_registration(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """Cancels only when the request says `confirm=yes`, or is a tool call (the runtime sends it only
    after the person pressed the cancel button); otherwise asks first (works without JS)."""
    if request.POST.get("confirm") != "yes" and not tool_call(request):
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
    return _write(
        request,
        event_id,
        services.cancel_registration,
        CancelOutput,
        done=gettext_lazy("Your registration is cancelled. Your seat is free for someone else."),
        unchanged=gettext_lazy("This registration was already cancelled."),
    )


@require_POST
def join_waitlist(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(
        request,
        event_id,
        services.join_waitlist,
        WaitlistOutput,
        done=gettext_lazy("You are on the waiting list. We will e-mail you if a seat frees up."),
        unchanged=gettext_lazy("You were already on the waiting list."),
    )


@require_POST
def leave_waitlist(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(
        request,
        event_id,
        services.leave_waitlist,
        LeaveWaitlistOutput,
        done=gettext_lazy("You have left the waiting list."),
        unchanged=gettext_lazy("You were not on the waiting list."),
    )


def _write(
    request: HtmxHttpRequest,
    event_id: str,
    use_case: Callable[..., Any],
    output: type[Serializer],
    *,
    done: StrOrPromise,
    unchanged: StrOrPromise,
    create_token: bool = False,
) -> HttpResponse:
    """One write from a page's form or a tool call: the use case once, a message for the person
    (`done`, or `unchanged` when the call was a repeat), then the page it came from."""
    visitor = visitor_from_request(request, create_token=create_token)
    mode = client_mode(request, default=Mode.UI)
    try:
        _check_tool_write(request, event_id)
        result = use_case(visitor=visitor, mode=mode, event_id=event_id)
    except DomainError as error:
        if tool_call(request):
            return _tool_refusal(request, error, action=use_case.__name__, mode=mode, event_id=event_id)
        return _refused(request, event_id, error)
    if result.outcome == "OK":
        messages.success(request, str(done))
    else:
        messages.info(request, str(unchanged))
    return _after_write(request, event_id, result=output(result).data)


# ── /me/ ──────────────────────────────────────────────────────────────────────────────────────


@require_GET
def me(request: HtmxHttpRequest) -> HttpResponse:
    return _render_me(request, region=_wants_fragment(request))


# ── helpers ───────────────────────────────────────────────────────────────────────────────────


def _render_detail(
    request: HtmxHttpRequest, event_id: str, *, region: bool, recorded: bool = True
) -> HttpResponse:
    visitor = visitor_from_request(request)
    details = _get_event_or_404(request, event_id, recorded=recorded)
    event = details.event
    url = request.build_absolute_uri(reverse("event-detail", kwargs={"event_id": event.public_id}))
    can = policies.permissions(
        event.facts(), details.visitor_facts(signed_in=visitor.is_authenticated), now=timezone.now()
    )
    context = {
        "event": event,
        "details": details,
        "can": can,
        "jsonld": jsonld.event_script(event, url=url),
        "back_url": _back_to_list_url(request.GET.get(FROM_PARAM, "")),
        "login_url": _auth_url("login", event.public_id),
        "signup_url": _auth_url("signup", event.public_id),
        "webmcp_state": {
            **_page_state(request, visitor),
            **detail_state(signed_in=visitor.is_authenticated, registered=details.is_registered, can=can),
        },
    }
    template = "events/event_detail.html#region" if region else "events/event_detail.html"
    return _fragment_aware(render(request, template, context))


def _render_me(request: HtmxHttpRequest, *, region: bool) -> HttpResponse:
    visitor = visitor_from_request(request)
    registrations: list[Registration] | None = None
    waitlist: list[selectors.WaitlistPlace] | None = None
    if visitor.is_authenticated:
        registrations = selectors.list_registrations(visitor=visitor)
        waitlist = selectors.list_waitlist(visitor=visitor)
    confirmed = [r for r in registrations or [] if r.is_active]
    now = timezone.now()
    registered = policies.VisitorFacts(signed_in=True, registered=True)
    # A cancel button is shown (and can confirm cancel_registration) for these.
    cancellable = {
        r.event.public_id
        for r in confirmed
        if policies.may_cancel(policies.EventFacts.of(r.event), registered, now=now)
    }
    context = {
        "saved_events": selectors.list_saved(visitor=visitor),
        "registrations": registrations,
        "confirmed": confirmed,
        "cancelled": [r for r in registrations or [] if not r.is_active],
        "cancellable": cancellable,
        "waitlist": waitlist,
        "webmcp_state": {**_page_state(request, visitor), "cancellable": bool(cancellable)},
    }
    return _fragment_aware(render(request, "events/me.html#region" if region else "events/me.html", context))


def _wants_fragment(request: HtmxHttpRequest) -> bool:
    """An htmx request that swaps part of the page (a history restore needs the whole page)."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def _fragment_aware(response: HttpResponse) -> HttpResponse:
    """The same URL answers a page or a fragment: caches must keep them apart."""
    patch_vary_headers(response, ("HX-Request", "HX-Target", "HX-History-Restore-Request"))
    return response


def _get_event_or_404(
    request: HtmxHttpRequest, event_id: str, *, recorded: bool = True
) -> selectors.EventDetails:
    """The event of a page; `recorded=False` when the page is re-drawn after a write (one row per act)."""
    try:
        return selectors.get_event_details(
            visitor=visitor_from_request(request),
            mode=client_mode(request, default=Mode.UI) if recorded else None,
            event_id=event_id,
        )
    except EventNotFound as error:
        raise Http404(str(error)) from error


def _page_state(request: HtmxHttpRequest, visitor: Visitor) -> dict[str, Any]:
    """What the WebMCP runtime needs on every page (the detail page adds the event's state)."""
    return {
        "signed_in": visitor.is_authenticated,
        "stateVersion": selectors.state_version(visitor=visitor),
    }


def _after_write(
    request: HtmxHttpRequest, event_id: str, *, result: dict[str, Any] | None = None
) -> HttpResponse:
    """htmx or a tool call: the refreshed region of the page the write came from (with the result for
    a tool call); otherwise a redirect back to that page."""
    tool = tool_call(request)
    origin = urlsplit(calling_page(request) if tool else _safe_next(request))
    if not (request.htmx or tool):
        return redirect("me") if origin.path == reverse("me") else _redirect_to_detail(request, event_id)
    # The region belongs to that page, so its WebMCP manifest and form attributes must be the page's
    # route, not this POST endpoint's. Re-drawing it records nothing: the write was the act.
    if origin.path == reverse("me"):
        request.resolver_match = resolve(reverse("me"))
        response = _render_me(request, region=True)
    elif tool and origin.path == reverse("event-list"):
        request.resolver_match = resolve(reverse("event-list"))
        response = render(
            request, "events/event_list.html#card_answer", _card_context(request, event_id, origin.query)
        )
    else:
        request.resolver_match = resolve(reverse("event-detail", kwargs={"event_id": event_id}))
        response = _render_detail(request, event_id, region=True, recorded=False)
    return with_tool_result(response, result) if tool and result is not None else response


def _check_tool_write(request: HtmxHttpRequest, event_id: str) -> None:
    """A tool call's write: the path's id and an input with nothing else in it, within the write rate
    the API allows. A person's form post is not a tool call and passes."""
    if not tool_call(request):
        return
    check_write_rate(request)
    validated_input(EventRefInput, {"event_id": event_id})
    _tool_input(request, NoInput)


def _tool_input(request: HtmxHttpRequest, serializer: type) -> dict[str, Any]:
    """A tool call's input, validated by the API's serializer for it (so the same input gets the same
    answer on both paths)."""
    try:
        data = tool_input(request)
    except MalformedToolInput as error:
        raise InvalidInput(str(error)) from error
    return validated_input(serializer, data)


def _tool_refusal(
    request: HtmxHttpRequest, error: DomainError, *, action: str, mode: Mode, event_id: str | None = None
) -> HttpResponse:
    """The envelope of a refused tool call; a refusal before the use case ran is its Activity row."""
    record_refusal(
        action=action, mode=mode, error=error, visitor=visitor_from_request(request), event_id=event_id
    )
    envelope = error_envelope(error, state_version=current_state_version(request))
    return tool_refusal(envelope, status=error.http_status, headers=error_headers(error))


def _refused(request: HtmxHttpRequest, event_id: str, error: DomainError) -> HttpResponse:
    """A refusal from a write use case, shown as a message on the page it came from (never a 500)."""
    if isinstance(error, EventNotFound) and not isinstance(error, RegistrationNotFound):
        raise Http404(str(error)) from error
    if isinstance(error, AuthRequired) and not request.htmx:
        messages.info(request, str(error.person_message))
        return redirect_to_login(reverse("event-detail", kwargs={"event_id": event_id}))
    messages.error(request, str(error.person_message))
    return _after_write(request, event_id)


def _redirect_to_detail(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """Back to the detail page, keeping its query ("back to results") when the form came from it."""
    path = reverse("event-detail", kwargs={"event_id": event_id})
    for candidate in (_safe_next(request), _same_site_referer(request)):
        parts = urlsplit(candidate)
        if candidate and parts.path == path and parts.query:
            return redirect(f"{path}?{parts.query}")
    return redirect(path)


def _same_site_referer(request: HtmxHttpRequest) -> str:
    """The Referer's path and query when it is a page of this site, else ""."""
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        parts = urlsplit(referer)
        return f"{parts.path}?{parts.query}" if parts.query else parts.path
    return ""


def _safe_next(request: HtmxHttpRequest) -> str:
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
