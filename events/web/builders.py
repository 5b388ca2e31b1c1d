"""What the pages draw, shared by the person's views (`events.web.views`, `door`) and the tool calls
of the same routes (`events.agent.pages`): the list's context, an event's page, My events, the region
a write redraws, the message a row leaves for the person, and the check-in page's parts.

Nothing here decides a rule: the context comes from the selectors and `policies.permissions`, and
every write is performed by the view that called. Redrawing after a write records nothing (the write
was the act), so one action is one Activity row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import ResolverMatch, resolve, reverse
from django.utils import timezone, translation
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy
from django_webmcp.http import is_same_site, same_site_path
from django_webmcp.registry import TOOL_HEADER
from django_webmcp.templatetags.webmcp import PAGE_ROUTE

from core.errors import AuthRequired, DomainError, InvalidInput
from core.visitors import Mode, Visitor, claimed_mode

from .. import jsonld, payment_methods, policies, selectors, tickets
from ..actions import ACTIONS, Caller, Performed, perform
from ..choices import PaymentMethod
from ..contract import payment_instructions
from ..errors import AnswersInvalid, EventNotFound, RegistrationNotFound, TicketUnknown
from ..forms import PAGE_PARAM, EventSearchForm, answer_fields
from ..mail.messages import reminders_on
from ..models import Registration
from ..questions import answers_schema, attendee_questions, form_of, shown_answers
from ..templatetags.event_display import payment_line
from ..tools import CHECK_IN, check_in_state, detail_state

if TYPE_CHECKING:
    from django_htmx.middleware import HtmxDetails

    class HtmxHttpRequest(HttpRequest):
        """A request that went through django-htmx's middleware and the visitor's (every page here)."""

        htmx: HtmxDetails
        visitor: Visitor


PAGE_SIZE = selectors.DEFAULT_PAGE_SIZE
#: Query parameter of the detail page that carries the list's query string, for the "back" link.
FROM_PARAM = "from"
#: What the answer of a page's URL varies by, besides the visitor and the language: the htmx fragments
#: of it, and the tool calls of its route (answered by `events.agent.pages`, never from a cache).
PAGE_VARY = ("HX-Request", "HX-Target", "HX-History-Restore-Request", TOOL_HEADER)


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
            page_numbers=page_numbers(page, page_count),
            page_out_of_range=result.total > 0 and page > page_count,
            first_number=result.offset + 1,
            last_number=result.offset + result.count,
            # The detail page builds its "back to results" link from this (validated there again).
            from_query=from_query(form),
        )
    context["webmcp_state"] = page_state(request, visitor, state_version=state_version)
    return context


def card_context(request: HtmxHttpRequest, event_id: str, query: str) -> dict[str, Any]:
    """One event's card as the list page at `query` shows it, with the page's manifest."""
    visitor = request.visitor
    details = selectors.get_event_details(visitor=visitor, event_id=event_id)  # a redraw: no row
    form = EventSearchForm(QueryDict(query))
    return {
        "event": details.event,
        "saved_ids": {details.event.public_id} if details.is_saved else set(),
        "from_query": from_query(form) if form.is_valid() else None,
        "webmcp_state": page_state(request, visitor),
    }


def from_query(form: EventSearchForm) -> QueryDict:
    """The list's conditions and page, from which the event page builds its "back to results" link."""
    page = form.page
    return querydict({**form.conditions, **({PAGE_PARAM: str(page)} if page > 1 else {})})


def tell(request: HtmxHttpRequest, performed: Performed) -> None:
    """The row's message for the person after a write: `done`, or `again` when it changed nothing."""
    said = performed.action.messages
    assert said is not None, f"{performed.action.name} has no page messages"
    if performed.outcome == "OK":
        messages.success(request, str(said.done))
    else:
        messages.info(request, str(said.again))


def render_detail(
    request: HtmxHttpRequest,
    event_id: str,
    *,
    region: bool,
    recorded: bool = True,
    page: ResolverMatch | None = None,
    state_version: int | None = None,
    draft: Draft | None = None,
) -> HttpResponse:
    visitor = request.visitor
    details = event_or_404(request, event_id, recorded=recorded)
    event = details.event
    asked = attendee_questions(form_of(event.question_form))
    url = request.build_absolute_uri(reverse("event-detail", kwargs={"event_id": event.public_id}))
    facts = details.visitor_facts(signed_in=visitor.is_authenticated)
    can = policies.permissions(policies.EventFacts.of(event), facts, now=timezone.now())
    choices = ticket_choices(event, now=timezone.now())
    context = {
        "event": event,
        "details": details,
        "can": can,
        "jsonld": jsonld.event_script(event, url=url),
        "back_url": back_to_list_url(request.GET.get(FROM_PARAM, "")),
        "login_url": auth_url("login", event.public_id),
        "signup_url": auth_url("signup", event.public_id),
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
        **choices,
        # The person's own registration's payment (paid types), for its line and its "Pay now".
        "my_payment": details.registration
        if details.registration is not None and details.registration.amount
        else None,
        "webmcp_state": {
            **page_state(request, visitor, state_version=state_version),
            **detail_state(
                signed_in=visitor.is_authenticated,
                registered=details.is_registered,
                can=can,
                answers_schema=answers_schema(form_of(event.question_form)),
                ticket_types=[identifier for identifier, _name, _price in choices["ticket_types"]] or None,
                payment_methods=[method for method, _label in choices["payment_choices"]] or None,
            ),
        },
    }
    if page is not None:
        context[PAGE_ROUTE] = page
    template = "events/event_detail.html#region" if region else "events/event_detail.html"
    return fragment_aware(render(request, template, context))


def render_me(
    request: HtmxHttpRequest,
    *,
    region: bool,
    page: ResolverMatch | None = None,
    draft: tuple[str, Draft] | None = None,
) -> HttpResponse:
    visitor = request.visitor
    registrations: list[Registration] | None = None
    waitlist: list[selectors.WaitlistPlace] | None = None
    person = None
    if visitor.user is not None:
        registrations = selectors.list_registrations(visitor=visitor)
        waitlist = selectors.list_waitlist(visitor=visitor)
        person = selectors.person_with_settings(visitor.user)
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
        "reminders_on": person is not None and reminders_on(person),
        **({"user": person} if person is not None else {}),  # with its reminder setting and feed
        "webmcp_state": {**page_state(request, visitor), "cancellable": bool(cancellable)},
        **({PAGE_ROUTE: page} if page is not None else {}),
    }
    return fragment_aware(render(request, "events/me.html#region" if region else "events/me.html", context))


def ticket_choices(event: Any, *, now: datetime) -> dict[str, Any]:
    """The register form's ticket types (those on sale now, with their prices, when the event sells
    more than one) and payment methods (when a type costs money and the event offers a choice)."""
    types = tickets.types_of(event)
    offered = tickets.on_sale(types, now)
    language = translation.get_language()
    methods = () if tickets.all_free(types) else payment_methods.offered(at_door=event.at_door)
    return {
        "ticket_types": [(spec.identifier, spec.name_in(language), spec.price) for spec in offered]
        if len(types) > 1
        else [],
        "payment_choices": [(m, PaymentMethod(m).label) for m in methods] if len(methods) > 1 else [],
    }


def payment_context(request: HtmxHttpRequest, registration: Registration) -> dict[str, Any]:
    """The payment page: the registration, how to pay it, whether a transfer may be reported now."""
    visitor = request.visitor
    return {
        "registration": registration,
        "event": registration.event,
        "payment_text": payment_line(registration),
        "instructions": payment_instructions(registration),
        "may_report": policies.may_report_payment(payment_status=registration.payment_status)
        and registration.is_pending_payment,
        "today": timezone.localdate().isoformat(),
        "webmcp_state": page_state(request, visitor),
    }


@dataclass(frozen=True)
class Draft:
    """Answers the person posted that were refused, and the refusal's fields: drawn back into the form."""

    answers: dict[str, Any]
    errors: dict[str, Any]


def answers_refused(request: HtmxHttpRequest, event_id: str, draft: Draft) -> HttpResponse:
    """The page the form was on, its form holding what was typed and each error beside its question."""
    messages.error(request, str(AnswersInvalid.person_message))
    origin = urlsplit(safe_next(request))
    if origin.path == reverse("me"):
        return render_me(
            request, region=bool(request.htmx), page=resolve(reverse("me")), draft=(event_id, draft)
        )
    page = resolve(reverse("event-detail", kwargs={"event_id": event_id}))
    return render_detail(request, event_id, region=bool(request.htmx), recorded=False, page=page, draft=draft)


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


def wants_fragment(request: HtmxHttpRequest) -> bool:
    """An htmx request that swaps part of the page (a history restore needs the whole page)."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def fragment_aware(response: HttpResponse) -> HttpResponse:
    """The same URL answers a page, a fragment or a tool call: caches must keep them apart."""
    patch_vary_headers(response, PAGE_VARY)
    return response


def event_or_404(request: HtmxHttpRequest, event_id: str, *, recorded: bool = True) -> selectors.EventDetails:
    """The event of a page: the `get_event_details` action (its row), or the selector alone when the
    page is re-drawn after a write (`recorded=False`: one row per act)."""
    visitor = request.visitor
    if not recorded:
        try:
            return selectors.get_event_details(visitor=visitor, event_id=event_id)
        except EventNotFound as error:
            raise Http404(str(error)) from error
    caller = page_caller(request)
    performed = perform(ACTIONS["get_event_details"], caller, {"event_id": event_id})
    if performed.error is not None:
        raise Http404(str(performed.error)) from performed.error
    return performed.result


def page_state(
    request: HtmxHttpRequest, visitor: Visitor, *, state_version: int | None = None
) -> dict[str, Any]:
    """What the WebMCP runtime needs on every page (the detail page adds the event's state);
    `state_version` when the caller has read it."""
    return {
        "signed_in": visitor.is_authenticated,
        "stateVersion": selectors.state_version(visitor=visitor) if state_version is None else state_version,
    }


def after_write(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """htmx: the refreshed region of the page the form was on; otherwise a redirect back to it."""
    origin = urlsplit(safe_next(request))
    if origin.path == reverse("payment", kwargs={"event_id": event_id}):
        return redirect(origin.path)  # the payment page's forms are plain posts
    if not request.htmx:
        return redirect("me") if origin.path == reverse("me") else redirect_to_detail(request, event_id)
    return redraw(request, event_id, origin, card=False)


def redraw(request: HtmxHttpRequest, event_id: str, origin: SplitResult, *, card: bool) -> HttpResponse:
    """The region of the page `origin` after a write on `event_id`: My events, the event's card on the
    list (`card`, for a tool call from the list), else the event's page. The region belongs to that
    page, so its WebMCP manifest and form attributes are that page's route (`PAGE_ROUTE`), not this
    POST endpoint's. Re-drawing it records nothing: the write was the act."""
    if origin.path == reverse("me"):
        return render_me(request, region=True, page=resolve(reverse("me")))
    if card and origin.path == reverse("event-list"):
        context = {**card_context(request, event_id, origin.query), PAGE_ROUTE: resolve(origin.path)}
        return render(request, "events/event_list.html#card_answer", context)
    page = resolve(reverse("event-detail", kwargs={"event_id": event_id}))
    return render_detail(request, event_id, region=True, recorded=False, page=page)


def refused(request: HtmxHttpRequest, event_id: str, error: DomainError) -> HttpResponse:
    """A refusal from a write use case, shown as a message on the page it came from (never a 500)."""
    # A form post's input beyond the route's id (a ticket type, a transfer's digits) is the person's to
    # put right; a route id that is not well-formed names no event.
    named = set(error.extra.get("fields", {})) - {"event_id"} if isinstance(error, InvalidInput) else set()
    if named:
        messages.error(request, str(error.person_message))
        return after_write(request, event_id)
    if isinstance(error, EventNotFound | InvalidInput) and not isinstance(error, RegistrationNotFound):
        raise Http404(str(error)) from error
    if isinstance(error, AuthRequired) and not request.htmx:
        messages.info(request, str(error.person_message))
        return redirect_to_login(reverse("event-detail", kwargs={"event_id": event_id}))
    messages.error(request, str(error.person_message))
    return after_write(request, event_id)


def redirect_to_detail(request: HtmxHttpRequest, event_id: str) -> HttpResponse:
    """Back to the detail page, keeping its query ("back to results") when the form came from it."""
    path = reverse("event-detail", kwargs={"event_id": event_id})
    for candidate in (safe_next(request), same_site_referer(request)):
        parts = urlsplit(candidate)
        if candidate and parts.path == path and parts.query:
            return redirect(f"{path}?{parts.query}")
    return redirect(path)


def same_site_referer(request: HtmxHttpRequest) -> str:
    """The Referer's path and query when it is a page of this site, else ""."""
    return same_site_path(request, request.headers.get("Referer", ""))


def safe_next(request: HtmxHttpRequest) -> str:
    candidate = request.POST.get("next", "") or request.GET.get("next", "")
    if is_same_site(request, candidate):
        return candidate
    return ""


def back_to_list_url(raw: str) -> str:
    """The list URL with the search the visitor came from, if that search is valid; else the bare list."""
    base = reverse("event-list")
    if not raw:
        return base
    form = EventSearchForm(QueryDict(raw))
    if not form.is_valid():
        return base
    params = {**form.conditions, **({PAGE_PARAM: str(form.page)} if form.page > 1 else {})}
    return f"{base}?{querydict(params).urlencode()}" if params else base


def auth_url(url_name: str, event_id: str) -> str:
    """Sign-in or sign-up URL that comes back to the event's page."""
    query = querydict({"next": reverse("event-detail", kwargs={"event_id": event_id})})
    return f"{reverse(url_name)}?{query.urlencode(safe='/')}"


def page_numbers(page: int, page_count: int) -> list[int | None]:
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


def page_caller(request: HtmxHttpRequest) -> Caller:
    """A person on a page: channel `ui`, whatever the request claims (`X-Client-Mode`, kept as a claim)."""
    return Caller(visitor=request.visitor, channel=Mode.UI, claimed=claimed_mode(request))


# ── the check-in page's parts (a person's htmx request, or an agent's tool call) ────────────────


DO_NOT_ADMIT = gettext_lazy("Do not admit")
NOT_UNDONE = gettext_lazy("Not undone")
NO_CODE = gettext_lazy("Type or scan a ticket code first.")


@dataclass(frozen=True)
class DoorAnswer:
    """What the page says after a scan, a choice or an undo, as plain data (the session keeps it)."""

    kind: str  # admitted | already | refused | undone | info
    message: str
    title: str = ""
    reason: str = ""  # a refusal's reason, e.g. TICKET_OTHER_EVENT
    name: str = ""
    email: str = ""
    at: str = ""  # ISO time of the standing check-in
    by: str = ""
    attendee_id: int | None = None
    #: The door's answers of the person (label, value), e.g. a dietary need.
    notes: tuple[tuple[str, str], ...] = ()
    #: What the door takes from them now (integer TWD; 0: nothing), recorded as paid by the check-in.
    paid_at_door: int = 0

    @property
    def checked_in_at(self) -> datetime | None:
        return datetime.fromisoformat(self.at) if self.at else None

    @property
    def changed(self) -> bool:
        """The counts changed: someone was let in, or a check-in undone."""
        return self.kind in ("admitted", "undone")

    @classmethod
    def refused(cls, error: DomainError, title: Any, *, invalid: Any = NO_CODE) -> DoorAnswer:
        """`invalid`: what to say when the input itself was refused (nothing typed, say)."""
        message = invalid if isinstance(error, InvalidInput) else error.person_message
        return cls("refused", str(message), title=str(title), reason=error.reason)


def answer_of_check_in(performed: Performed, *, scanned: bool = False) -> DoorAnswer:
    """The page's answer to one `check_in_attendee` call (a person's or an agent's). `scanned`: a code
    was given, so a code the input refuses (longer than any ticket) is simply not one of ours."""
    if performed.error is not None:
        invalid = TicketUnknown.person_message if scanned else NO_CODE
        return DoorAnswer.refused(performed.error, DO_NOT_ADMIT, invalid=invalid)
    result = performed.result
    attendee = result.attendee
    said = performed.action.messages
    assert said is not None
    return DoorAnswer(
        "admitted" if result.admitted else "already",
        str(said.done if result.admitted else said.again),
        name=attendee.name,
        email=attendee.email,
        at=result.check_in.checked_in_at.isoformat(),
        by=attendee.checked_in_by,
        attendee_id=attendee.attendee_id,
        notes=tuple((answer.label, answer.value) for answer in attendee.door_answers),
        paid_at_door=result.paid_at_door,
    )


def answer_part(request: HtmxHttpRequest, event_id: str, answer: DoorAnswer) -> HttpResponse:
    """The answer, large (`#door-answer`)."""
    context = {"answer": answer, "event_id": event_id, **door_page_of(request, event_id)}
    return render(request, "events/includes/check_in_answer.html", context)


def live_part(
    request: HtmxHttpRequest, event_id: str, found: Any, *, listed: bool, query: str
) -> HttpResponse:
    """The list of people found (`#door-results`) and the counts (`#door-counts`, out of band)."""
    context = {**door_context(request, found, listed=listed, query=query), "oob": True}
    return render(request, "events/includes/check_in_live.html", context)


def door_state(visitor: Visitor, *, door_staff: bool) -> dict[str, Any]:
    return {
        "signed_in": visitor.is_authenticated,
        "stateVersion": selectors.state_version(visitor=visitor),
        **check_in_state(door_staff=door_staff),
    }


def door_page_of(request: HtmxHttpRequest, event_id: str) -> dict[str, Any]:
    """The check-in page's route and state, for a part drawn by another route (its forms are that
    page's, so the ones an agent's call waits for are marked: `webmcp_confirm`)."""
    page: ResolverMatch = resolve(reverse(CHECK_IN, kwargs={"event_id": event_id}))
    return {PAGE_ROUTE: page, "webmcp_state": door_state(request.visitor, door_staff=True)}


def door_context(request: HtmxHttpRequest, found: Any, *, listed: bool, query: str) -> dict[str, Any]:
    event = found.event
    return {
        "event": event,
        "event_id": event.public_id,
        "found": found,
        "listed": listed,
        "query": query,
        # What the page's refresh sends: the search whose list it shows (hx-vals).
        "refresh": json.dumps({"query": query if listed else "", "list": "1" if listed else ""}),
        **door_page_of(request, event.public_id),
    }
