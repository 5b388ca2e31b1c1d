"""Pages for people (layer 4): parse the request, perform one action row, map a refusal, render.

Every rule lives in `selectors` and `services`; these views only choose what to show, drawn by
`builders` (which the tool calls of the same routes, `events.agent.pages`, draw with too). Writes
answer an htmx request with the page's refreshed main region (so the WebMCP manifest inside it
follows the new state at once) and a plain form post with a redirect (post/redirect/get). Every
row with a page route (`Action.page`) is served by `write`, the route made from the row in
`events/urls.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.cache import caches
from django.http import Http404, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.views.decorators.http import require_GET, require_POST

from core import conditional
from core.conditional import Validators
from core.revision import revision
from core.visitors import Visitor, with_token

from .. import selectors
from ..actions import ACTIONS, perform
from ..errors import AnswersInvalid, PaymentNotFound
from ..forms import EventSearchForm, answer_fields, answers_from_post
from ..mail import ics
from ..questions import attendee_questions, form_of
from ..templatetags.cards import region_key, region_vary
from .builders import (
    PAGE_SIZE,
    PAGE_VARY,
    Draft,
    after_write,
    answers_refused,
    event_or_404,
    fragment_aware,
    list_context,
    page_caller,
    page_state,
    payment_context,
    refused,
    render_detail,
    render_me,
    safe_next,
    same_site_referer,
    tell,
    wants_fragment,
)

if TYPE_CHECKING:
    from .builders import HtmxHttpRequest


def home(request: HtmxHttpRequest) -> HttpResponse:
    return redirect("event-list")


@require_GET
def event_list(request: HtmxHttpRequest) -> HttpResponse:
    """The list, answered 304 while the catalogue has not changed since the visitor's copy (for a
    visitor without an account, the catalogue as read at most `CATALOGUE_REVISION_SECONDS` ago)."""
    visitor = request.visitor
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
    caller = page_caller(request)
    state = page_state(request, visitor, state_version=state_version)
    # Only the search form and the page links target the results; any other htmx request gets the
    # whole page and picks what it needs.
    partial = wants_fragment(request) and request.htmx.target == "results"
    region = region_vary(
        path=request.get_full_path(), visitor_key=visitor.key, state=state, catalogue=catalogue
    )
    kept = None if partial else caches[settings.PAGE_CACHE].get(region_key(region))
    if kept is not None:
        if form.is_valid():  # the visit is still a search (its Activity row); nothing is drawn from it
            window = {**_page_window(form), "with_seats": False}
            perform(ACTIONS["search_events"], caller, form.conditions, options=window)
        context = {"region": region, "kept_region": kept, "webmcp_state": state}
        return fragment_aware(render(request, "events/event_list.html", context))
    performed = None
    if form.is_valid():
        performed = perform(ACTIONS["search_events"], caller, form.conditions, options=_page_window(form))
    context = list_context(request, visitor, form, performed, state_version=state_version)
    context["region"] = region
    template = "events/event_list.html#results" if partial else "events/event_list.html"
    return fragment_aware(render(request, template, context))


def _page_window(form: EventSearchForm) -> dict[str, Any]:
    """The page's own arguments of a search: the form's page of cards, with seats ("Full")."""
    return {"limit": PAGE_SIZE, "offset": (form.page - 1) * PAGE_SIZE, "with_seats": True}


@require_GET
def event_detail(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """The event's page, answered 304 while neither the event nor the visitor's state has changed (for
    a visitor without an account, the event as read at most `CATALOGUE_REVISION_SECONDS` ago)."""
    visitor = request.visitor
    if visitor.is_authenticated:
        event = selectors.event_revision(event_id=event_id)
    else:
        event = selectors.kept_event_revision(event_id=event_id)
    region = wants_fragment(request)
    if event is None:  # no such event: the action's row and the 404
        return render_detail(request, event_id, region=region)
    return _conditional_page(
        request,
        visitor,
        event,
        lambda version: render_detail(request, event_id, region=region, state_version=version),
    )


@require_GET
def event_ics(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    details = event_or_404(request, event_id)
    event = details.event
    url = request.build_absolute_uri(reverse("event-detail", kwargs={"event_id": event.public_id}))
    response = HttpResponse(ics.event_calendar(event, url=url), content_type="text/calendar; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{ics.filename(event)}"'
    return response


@require_POST
def write(request: HtmxHttpRequest, event_id: str, action: str) -> HttpResponse:
    """A person's button on an event (its route made from the row, `Action.page`): the action once,
    the row's message, then the page the form was on (its region for htmx, else a redirect). A row
    with a `confirm_page` asks first unless the post says `confirm=yes` (works without JavaScript; a
    tool call of it is `events.agent.pages.write`, sent only after the person pressed the button)."""
    row = ACTIONS[action]
    if row.confirm_page is not None and request.POST.get("confirm") != "yes":
        details = event_or_404(request, event_id)
        context = {
            "event": details.event,
            "details": details,
            # Where to return after the answer: the page the button was on.
            "next": safe_next(request) or same_site_referer(request),
            "webmcp_state": page_state(request, request.visitor),
        }
        return render(request, row.confirm_page, context)
    if row.anonymous_token:
        with_token(request)
    data: dict[str, Any] = {"event_id": event_id}
    # The row's other inputs, as the form posted them (a ticket type, a payment method, the digits of
    # a transfer): what the row does not take is never read.
    for name in row.input._declared_fields:
        if name not in ("event_id", "answers") and request.POST.get(name, "") != "":
            data[name] = request.POST[name]
    answers = _posted_answers(request, event_id) if "answers" in row.input._declared_fields else None
    if answers is not None:  # the event asks questions: its form's answers (else, as ever, none)
        data["answers"] = answers
    performed = perform(row, page_caller(request), data)
    if isinstance(performed.error, AnswersInvalid) and answers is not None:
        return answers_refused(request, event_id, Draft(answers, performed.error.extra.get("fields", {})))
    if performed.error is not None:
        return refused(request, event_id, performed.error)
    tell(request, performed)
    return after_write(request, performed.arguments["event_id"])


def _posted_answers(request: HtmxHttpRequest, event_id: str) -> dict[str, Any] | None:
    """The answers the form posted, read by the event's questions; None for an event without any (its
    form has no fields, and the action takes no answers: as before there were questions)."""
    asked = attendee_questions(form_of(selectors.question_form(event_id=event_id)))
    return answers_from_post(asked, request.POST) if asked else None


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


@require_GET
def me(request: HtmxHttpRequest) -> HttpResponse:
    return render_me(request, region=wants_fragment(request))


@require_GET
def payment(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """The person's own payment for the event: what to pay, by when, how, with which reference; the
    form that reports their transfer; and, later, that it is paid or refunded. It needs their
    sign-in, and its address names nobody: another person's payment is not found here (404)."""
    if not request.visitor.is_authenticated:
        return redirect_to_login(request.get_full_path())
    try:
        registration = selectors.my_payment(visitor=request.visitor, event_id=event_id)
    except PaymentNotFound as error:
        raise Http404(str(error)) from error
    return render(request, "events/payment.html", payment_context(request, registration))


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
        return fragment_aware(build(version))
    # The secret the page's token is made from; a visitor without one gets it now (the page would).
    secret = request.META.get("CSRF_COOKIE")
    if secret is None:
        get_token(request)
        secret = request.META.get("CSRF_COOKIE")
    parts = [
        "page",
        request.get_full_path(),
        wants_fragment(request),
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
