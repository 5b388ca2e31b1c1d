"""Pages for people (layer 4): parse the request, perform one action row, map a refusal, render.

Every rule lives in `selectors` and `services`; these views only choose what to show. Writes answer an
htmx request with the page's refreshed main region (so the WebMCP manifest inside it follows the new
state at once) and a plain form post with a redirect (post/redirect/get).

The WebMCP tool calls of the same routes are `events.agent.pages` (told apart at the route); they
redraw the calling page's region with `redraw` and tell the person with `tell`, as these views do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.cache import caches
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import ResolverMatch, resolve, reverse
from django.utils import timezone, translation
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from core import conditional
from core.conditional import Validators
from core.errors import AuthRequired, DomainError, InvalidInput
from core.revision import revision
from core.visitors import Mode, Visitor, client_mode, visitor_from_request
from webmcp.http import is_same_site, same_site_path
from webmcp.registry import TOOL_HEADER
from webmcp.templatetags.webmcp import PAGE_ROUTE

from .. import jsonld, policies, questions, selectors
from ..actions import ACTIONS, Caller, Performed, perform
from ..errors import AnswersInvalid, EventNotFound, RegistrationNotFound
from ..forms import PAGE_PARAM, EventSearchForm, answer_fields, answers_from_post
from ..mail import ics
from ..mail.messages import reminders_on
from ..models import Registration
from ..questions import attendee_questions, form_of, shown_answers
from ..templatetags.cards import drawn_key
from ..tools import detail_state

if TYPE_CHECKING:
    from django_htmx.middleware import HtmxDetails

    class HtmxHttpRequest(HttpRequest):
        """A request that went through django-htmx's middleware (every page here does)."""

        htmx: HtmxDetails


PAGE_SIZE = selectors.DEFAULT_PAGE_SIZE
#: Query parameter of the detail page that carries the list's query string, for the "back" link.
FROM_PARAM = "from"
#: What the answer of a page's URL varies by, besides the visitor and the language: the htmx fragments
#: of it, and the tool calls of its route (answered by `events.agent.pages`, never from a cache).
PAGE_VARY = ("HX-Request", "HX-Target", "HX-History-Restore-Request", TOOL_HEADER)


def home(request: HtmxHttpRequest) -> HttpResponse:
    return redirect("event-list")


# ── /events/ ──────────────────────────────────────────────────────────────────────────────────


@require_GET
def event_list(request: HtmxHttpRequest) -> HttpResponse:
    """The list, answered 304 while the catalogue has not changed since the visitor's copy (for a
    visitor without an account, the catalogue as read at most `CATALOGUE_REVISION_SECONDS` ago)."""
    visitor = visitor_from_request(request)
    if visitor.is_authenticated:
        catalogue = selectors.catalogue_revision()
    else:
        catalogue = selectors.kept_catalogue_revision()
    return _conditional_page(
        request, visitor, catalogue, lambda version: _list_page(request, visitor, version, catalogue)
    )


def _list_page(
    request: HtmxHttpRequest, visitor: Visitor, state_version: int, catalogue: tuple[Any, ...]
) -> HttpResponse:
    """The list, its region (all of it but the messages) kept once drawn: what it shows follows from
    the URL (the form, the conditions, the page), the visitor and their state (saves: the cards'
    badges; the manifest) and the catalogue's revision (its events, seats and clock: the same values
    its ETag is made of), so drawn once, it is the same for everyone who asks that."""
    form = EventSearchForm(request.GET)
    caller = Caller(visitor=visitor, channel=client_mode(request, default=Mode.UI))
    state = _page_state(request, visitor, state_version=state_version)
    # Only the search form and the page links target the results; any other htmx request gets the
    # whole page and picks what it needs.
    partial = _wants_fragment(request) and request.htmx.target == "results"
    region_key = drawn_key(
        "list-region", request.get_full_path(), visitor.key, sorted(state.items()), catalogue
    )
    region = None if partial else caches[settings.PAGE_CACHE].get(region_key)
    if region is not None:
        if form.is_valid():  # the visit is still a search (its Activity row); nothing is drawn from it
            window = {**_page_window(form), "with_seats": False}
            perform(ACTIONS["search_events"], caller, form.conditions, options=window)
        context = {"region_key": region_key, "kept_region": region, "webmcp_state": state}
        return _fragment_aware(render(request, "events/event_list.html", context))
    performed = None
    if form.is_valid():
        performed = perform(ACTIONS["search_events"], caller, form.conditions, options=_page_window(form))
    context = list_context(request, visitor, form, performed, state_version=state_version)
    context["region_key"] = region_key
    template = "events/event_list.html#results" if partial else "events/event_list.html"
    return _fragment_aware(render(request, template, context))


def _page_window(form: EventSearchForm) -> dict[str, Any]:
    """The page's own arguments of a search: the form's page of cards, with seats ("Full")."""
    return {"limit": PAGE_SIZE, "offset": (form.page - 1) * PAGE_SIZE, "with_seats": True}


def list_context(
    request: HtmxHttpRequest,
    visitor: Visitor,
    form: EventSearchForm,
    performed: Performed | None,
    *,
    state_version: int | None = None,
) -> dict[str, Any]:
    """Everything the list page shows for `form`'s search, answered by `performed` (None: the form is
    not valid, and nothing was searched); `state_version` when the caller has read it."""
    context: dict[str, Any] = {"form": form, "result": None}
    if performed is not None and performed.error is None:
        page = form.page
        result = performed.result
        filters = querydict(form.conditions)
        page_count = max(1, -(-result.total // PAGE_SIZE))
        described = form.described_conditions()
        for condition in described:
            # A link that removes just this condition: the person chooses what to drop, never the page.
            others = {k: v for k, v in form.conditions.items() if k != condition["name"]}
            condition["without_query"] = f"?{querydict(others).urlencode()}" if others else ""
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
    context["webmcp_state"] = _page_state(request, visitor, state_version=state_version)
    return context


def _card_context(request: HtmxHttpRequest, event_id: str, query: str) -> dict[str, Any]:
    """One event's card as the list page at `query` shows it, with the page's manifest."""
    visitor = visitor_from_request(request)
    details = selectors.get_event_details(visitor=visitor, event_id=event_id)  # a redraw: no row
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
    return querydict({**form.conditions, **({PAGE_PARAM: str(page)} if page > 1 else {})})


# ── /events/<id>/ ─────────────────────────────────────────────────────────────────────────────


@require_GET
def event_detail(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """The event's page, answered 304 while neither the event nor the visitor's state has changed."""
    visitor = visitor_from_request(request)
    event = selectors.event_revision(event_id=event_id)
    region = _wants_fragment(request)
    if event is None:  # no such event: the action's row and the 404
        return _render_detail(request, event_id, region=region)
    return _conditional_page(
        request,
        visitor,
        event,
        lambda version: _render_detail(request, event_id, region=region, state_version=version),
    )


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
    return _write(request, event_id, "save_event")


@require_POST
def unsave_event(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "unsave_event")


@require_POST
def register_event(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """The person's registration with their answers to the event's questions (none: as ever). Answers
    that are refused come back in the form, each error beside its question, in their language."""
    return _write(request, event_id, "register_event", answers=_posted_answers(request, event_id))


@require_POST
def update_registration_answers(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """My events: the person changes their answers (refused ones come back in the form)."""
    return _write(
        request, event_id, "update_registration_answers", answers=_posted_answers(request, event_id)
    )


@require_POST
def register_questions(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """The form's questions redrawn for the answers given so far (htmx, on a change): a conditional
    question appears or disappears. Writes nothing; a POST so that the form's fields (its CSRF token
    among them) never travel in a URL. Without JavaScript every question is drawn, each conditional
    one saying when it is asked, and the use case drops what is not."""
    asked = attendee_questions(form_of(selectors.question_form(event_id=event_id)))
    answers = answers_from_post(asked, request.POST)
    form_id = request.POST.get("form_id", "")
    context = {
        "answer_fields": answer_fields(asked, answers, language=translation.get_language()),
        "questions_url": request.path,
        "form_id": form_id if re.fullmatch(r"[a-z0-9-]{1,90}", form_id) else "register",
    }
    return render(request, "events/includes/questions.html", context)


def _posted_answers(request: HtmxHttpRequest, event_id: str) -> dict[str, Any] | None:
    """The answers the form posted, read by the event's questions; None for an event without any (its
    form has no fields, and the action takes no answers: as before there were questions)."""
    asked = attendee_questions(form_of(selectors.question_form(event_id=event_id)))
    return answers_from_post(asked, request.POST) if asked else None


@require_POST
def cancel_registration(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """Cancels only when the request says `confirm=yes`; otherwise asks first (works without JS). A
    tool call of it is `events.agent.pages.cancel_registration` (the runtime sends it only after the
    person pressed the cancel button)."""
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
    return _write(request, event_id, "cancel_registration")


@require_POST
def join_waitlist(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "join_waitlist")


@require_POST
def leave_waitlist(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    return _write(request, event_id, "leave_waitlist")


@require_POST
def resend_ticket(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """The holder asks for their ticket by e-mail again (on the event page and My events)."""
    return _write(request, event_id, "resend_ticket")


def _write(
    request: HtmxHttpRequest, event_id: str, name: str, *, answers: dict[str, Any] | None = None
) -> HttpResponse:
    """One write from a page's form: the action once, the row's message for the person, then the page
    the form was on (its region for htmx, else a redirect). Refused answers are drawn back into the
    form, each beside its question."""
    action = ACTIONS[name]
    caller = Caller(
        visitor=visitor_from_request(request, create_token=action.anonymous_token),
        channel=client_mode(request, default=Mode.UI),
    )
    data: dict[str, Any] = {"event_id": event_id}
    if answers is not None:
        data["answers"] = answers
    performed = perform(action, caller, data)
    if isinstance(performed.error, AnswersInvalid) and answers is not None:
        return _answers_refused(request, event_id, Draft(answers, performed.error.extra.get("fields", {})))
    if performed.error is not None:
        return _refused(request, event_id, performed.error)
    tell(request, performed)
    return _after_write(request, performed.arguments["event_id"])


def tell(request: HtmxHttpRequest, performed: Performed) -> None:
    """The row's message for the person after a write: `done`, or `again` when it changed nothing."""
    said = performed.action.messages
    assert said is not None, f"{performed.action.name} has no page messages"
    if performed.outcome == "OK":
        messages.success(request, str(said.done))
    else:
        messages.info(request, str(said.again))


# ── /me/ ──────────────────────────────────────────────────────────────────────────────────────


@require_GET
def me(request: HtmxHttpRequest) -> HttpResponse:
    return _render_me(request, region=_wants_fragment(request))


# ── helpers ───────────────────────────────────────────────────────────────────────────────────


def _render_detail(
    request: HtmxHttpRequest,
    event_id: str,
    *,
    region: bool,
    recorded: bool = True,
    page: ResolverMatch | None = None,
    state_version: int | None = None,
    draft: Draft | None = None,
) -> HttpResponse:
    visitor = visitor_from_request(request)
    details = _get_event_or_404(request, event_id, recorded=recorded)
    event = details.event
    asked = attendee_questions(form_of(event.question_form))
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
        "answer_fields": answer_fields(
            asked,
            draft.answers if draft else {},
            errors=draft.errors if draft else None,
            language=translation.get_language(),
        ),
        # Drawn for the first time, every question shows (htmx then hides what is not asked); drawn
        # back with a refusal, exactly what the answers ask, each error beside its question.
        "questions_first_draw": draft is None,
        "my_answers": shown_answers(details.registration, translation.get_language())
        if details.is_registered
        else [],
        "webmcp_state": {
            **_page_state(request, visitor, state_version=state_version),
            **detail_state(
                signed_in=visitor.is_authenticated,
                registered=details.is_registered,
                can=can,
                answers_schema=questions.answers_schema(form_of(event.question_form)),
            ),
        },
    }
    if page is not None:
        context[PAGE_ROUTE] = page
    template = "events/event_detail.html#region" if region else "events/event_detail.html"
    return _fragment_aware(render(request, template, context))


def _render_me(
    request: HtmxHttpRequest,
    *,
    region: bool,
    page: ResolverMatch | None = None,
    draft: tuple[str, Draft] | None = None,
) -> HttpResponse:
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
        # Each registration's answers and the form that changes them, beside it in the list.
        "answers": [(r, _my_answers(r, draft, now=now)) for r in confirmed],
        "registrations": registrations,
        "confirmed": confirmed,
        "cancelled": [r for r in registrations or [] if not r.is_active],
        "cancellable": cancellable,
        "waitlist": waitlist,
        "reminders_on": visitor.user is not None and reminders_on(visitor.user),
        "webmcp_state": {**_page_state(request, visitor), "cancellable": bool(cancellable)},
        **({PAGE_ROUTE: page} if page is not None else {}),
    }
    return _fragment_aware(render(request, "events/me.html#region" if region else "events/me.html", context))


def _my_answers(registration: Registration, draft: tuple[str, Draft] | None, *, now: Any) -> dict[str, Any]:
    """A registration's answers on My events: as the person reads them, and the form that changes them
    while they may (`policies.may_change_answers`), holding a refused draft if there is one."""
    language = translation.get_language()
    event = registration.event
    asked = attendee_questions(form_of(event.question_form))
    stored = {key: entry.get("value") for key, entry in (registration.answers or {}).items()}
    mine = draft[1] if draft is not None and draft[0] == event.public_id else None
    editable = bool(asked) and policies.may_change_answers(
        policies.EventFacts.of(event), closes_at=event.answers_close_at, now=now
    )
    return {
        "shown": shown_answers(registration, language),
        "editable": editable,
        "open": mine is not None,
        "first_draw": mine is None,
        "fields": answer_fields(
            asked, mine.answers if mine else stored, errors=mine.errors if mine else None, language=language
        )
        if editable
        else [],
        "pending": registration.is_pending,
    }


def _wants_fragment(request: HtmxHttpRequest) -> bool:
    """An htmx request that swaps part of the page (a history restore needs the whole page)."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def _fragment_aware(response: HttpResponse) -> HttpResponse:
    """The same URL answers a page, a fragment or a tool call: caches must keep them apart."""
    patch_vary_headers(response, PAGE_VARY)
    return response


def _conditional_page(
    request: HtmxHttpRequest,
    visitor: Visitor,
    shown: tuple[Any, ...],
    build: Callable[[int], HttpResponse],
) -> HttpResponse:
    """A page's GET answered 304 while nothing it shows has changed: `shown` is what the catalogue or
    the event says now (`selectors.catalogue_revision`, `event_revision`), read before anything is
    drawn; `build(state_version)` draws the page otherwise.

    The ETag holds everything else the page's HTML depends on: the URL (its query, the "back" link),
    the fragment asked for, the visitor and their stateVersion (saves, registrations, the waiting
    list), the session's CSRF secret (the page carries a token of it, valid as long as the secret
    is: a new session, a sign-in, gets a new ETag), the running code and the settings it reads; the
    language and the site's address are the helper's. A page with a message waiting is drawn: the
    message is shown once.

    Never for a shared cache: every page carries the session's CSRF token (the language switcher,
    the WebMCP runtime's writes), so it is `private, no-cache`, the visitor's own browser asking
    again each time (core/conditional.py)."""
    version = selectors.state_version(visitor=visitor)
    if len(messages.get_messages(request)):
        return _fragment_aware(build(version))
    # The secret the page's token is made from; a visitor without one gets it now (the page would).
    secret = request.META.get("CSRF_COOKIE")
    if secret is None:
        get_token(request)
        secret = request.META.get("CSRF_COOKIE")
    parts = [
        "page",
        request.get_full_path(),
        _wants_fragment(request),
        request.htmx.target if request.htmx else None,
        shown,
        visitor.key,
        version,
        secret,
        revision(),
        settings.WAITLIST_OFFERS_STOP_HOURS,
    ]
    validators = Validators(etag=conditional.etag(request, parts))
    return conditional.answer(request, validators, lambda: build(version), shared=False, vary=PAGE_VARY)


def _get_event_or_404(
    request: HtmxHttpRequest, event_id: str, *, recorded: bool = True
) -> selectors.EventDetails:
    """The event of a page: the `get_event_details` action (its row), or the selector alone when the
    page is re-drawn after a write (`recorded=False`: one row per act)."""
    visitor = visitor_from_request(request)
    if not recorded:
        try:
            return selectors.get_event_details(visitor=visitor, event_id=event_id)
        except EventNotFound as error:
            raise Http404(str(error)) from error
    caller = Caller(visitor=visitor, channel=client_mode(request, default=Mode.UI))
    performed = perform(ACTIONS["get_event_details"], caller, {"event_id": event_id})
    if performed.error is not None:
        raise Http404(str(performed.error)) from performed.error
    return performed.result


def _page_state(
    request: HtmxHttpRequest, visitor: Visitor, *, state_version: int | None = None
) -> dict[str, Any]:
    """What the WebMCP runtime needs on every page (the detail page adds the event's state);
    `state_version` when the caller has read it."""
    return {
        "signed_in": visitor.is_authenticated,
        "stateVersion": selectors.state_version(visitor=visitor) if state_version is None else state_version,
    }


def _after_write(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """htmx: the refreshed region of the page the form was on; otherwise a redirect back to it."""
    origin = urlsplit(_safe_next(request))
    if not request.htmx:
        return redirect("me") if origin.path == reverse("me") else _redirect_to_detail(request, event_id)
    return redraw(request, event_id, origin, card=False)


def redraw(request: HtmxHttpRequest, event_id: str, origin: SplitResult, *, card: bool) -> HttpResponse:
    """The region of the page `origin` after a write on `event_id`: My events, the event's card on the
    list (`card`, for a tool call from the list), else the event's page. The region belongs to that
    page, so its WebMCP manifest and form attributes are that page's route (`PAGE_ROUTE`), not this
    POST endpoint's. Re-drawing it records nothing: the write was the act."""
    if origin.path == reverse("me"):
        return _render_me(request, region=True, page=resolve(reverse("me")))
    if card and origin.path == reverse("event-list"):
        context = {**_card_context(request, event_id, origin.query), PAGE_ROUTE: resolve(origin.path)}
        return render(request, "events/event_list.html#card_answer", context)
    page = resolve(reverse("event-detail", kwargs={"event_id": event_id}))
    return _render_detail(request, event_id, region=True, recorded=False, page=page)


@dataclass(frozen=True)
class Draft:
    """Answers the person posted that were refused, and the refusal's fields: drawn back into the form."""

    answers: dict[str, Any]
    errors: dict[str, Any]


def _answers_refused(request: HtmxHttpRequest, event_id: str, draft: Draft) -> HttpResponse:
    """The page the form was on, its form holding what was typed and each error beside its question."""
    messages.error(request, str(AnswersInvalid.person_message))
    origin = urlsplit(_safe_next(request))
    if origin.path == reverse("me"):
        return _render_me(
            request, region=bool(request.htmx), page=resolve(reverse("me")), draft=(event_id, draft)
        )
    page = resolve(reverse("event-detail", kwargs={"event_id": event_id}))
    return _render_detail(
        request, event_id, region=bool(request.htmx), recorded=False, page=page, draft=draft
    )


def _refused(request: HtmxHttpRequest, event_id: str, error: DomainError) -> HttpResponse:
    """A refusal from a write use case, shown as a message on the page it came from (never a 500)."""
    # A form post's only input is the route's id: one that is not well-formed names no event either.
    if isinstance(error, EventNotFound | InvalidInput) and not isinstance(error, RegistrationNotFound):
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
    return same_site_path(request, request.headers.get("Referer", ""))


def _safe_next(request: HtmxHttpRequest) -> str:
    candidate = request.POST.get("next", "") or request.GET.get("next", "")
    if is_same_site(request, candidate):
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
    return f"{base}?{querydict(params).urlencode()}" if params else base


def _auth_url(url_name: str, event_id: str) -> str:
    """Sign-in or sign-up URL that comes back to the event's page."""
    query = querydict({"next": reverse("event-detail", kwargs={"event_id": event_id})})
    return f"{reverse(url_name)}?{query.urlencode(safe='/')}"


def _page_numbers(page: int, page_count: int) -> list[int | None]:
    """Page links to show, Django's elided range: the first, the last and two either side of `page`;
    None marks a gap. A page past the end shows no links (the page says there is no such page)."""
    if page > page_count:
        return []
    pages = Paginator(range(page_count), 1).get_elided_page_range(page, on_each_side=2, on_ends=1)
    return [number if isinstance(number, int) else None for number in pages]


def querydict(params: dict[str, str]) -> QueryDict:
    query = QueryDict(mutable=True)
    for key, value in params.items():
        query[key] = value
    return query
