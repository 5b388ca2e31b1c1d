"""The check-in page for people (layer 4): the event's door staff let people in.

`/events/<id>/check-in/` is for the event's door staff and managers (`policies.may_check_in`, asked by
the use cases): anyone else gets a 403 page, an anonymous visitor the sign-in. Staff type a ticket code
or scan it (a USB scanner types the code and Enter; the camera, `static/js/door.js`, fills in and
submits the same form), or find a person by name or e-mail and check them in. Each form performs one
action row, and the answer is drawn large: admitted, already checked in, or refused in the refusal's
own words (`person_message`). The live counts come from `find_attendee`: drawn with the page, and
again after every check-in or undo and every half minute, each time by a request (and a row) of its own.

With htmx a form answers with the part of the page it changes; without JavaScript a check-in or an undo
is post/redirect/get (the answer is kept in the session for the next page) and a search answers with
the page. The tool calls of the same routes are `events.agent.pages` (told apart at the route), which
draw the same parts with `builders.answer_part` and `live_part`.

The ticket code is a credential: it is only ever in a POST body, never in a URL, an answer, the session
or a log line; a refused code is not shown back either.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core.errors import AuthRequired, DomainError, InvalidInput

from ..actions import ACTIONS, Performed, perform
from ..errors import EventNotFound, NotEventStaff
from ..tools import CHECK_IN
from .builders import (
    NOT_UNDONE,
    DoorAnswer,
    answer_of_check_in,
    answer_part,
    door_context,
    door_state,
    live_part,
    page_caller,
)

if TYPE_CHECKING:
    from .builders import HtmxHttpRequest as HttpRequest  # every page request went through django-htmx
else:
    from django.http import HttpRequest

#: The event a person's check-in or undo triggers on the page (HX-Trigger): the counts and the list
#: listen for it and are drawn again.
DOOR_CHANGED = "door-changed"
#: Where a form post without JavaScript leaves its answer for the page it redirects to.
ANSWER_SESSION_KEY = "door-answer:{event_id}"


def _answer_of_undo(performed: Performed) -> DoorAnswer:
    if performed.error is not None:
        return DoorAnswer.refused(performed.error, NOT_UNDONE)
    result = performed.result
    said = performed.action.messages
    assert said is not None
    user = result.registration.user
    return DoorAnswer(
        "undone" if result.undone else "info",
        str(said.done if result.undone else said.again),
        name=user.get_full_name() or user.get_username(),
        attendee_id=result.registration.pk,
    )


# ── the routes ────────────────────────────────────────────────────────────────────────────────


@require_GET
def check_in(request: HttpRequest, event_id: str) -> HttpResponse:
    """The page: the counts, the answer a form post without JavaScript left, the forms."""
    performed = perform(ACTIONS["find_attendee"], page_caller(request), {"event_id": event_id, "query": ""})
    if (barrier := _barrier(request, event_id, performed.error)) is not None:
        return barrier
    if performed.error is not None:
        raise Http404(str(performed.error)) from performed.error
    stored = request.session.pop(ANSWER_SESSION_KEY.format(event_id=event_id), None)
    answer = DoorAnswer(**stored) if isinstance(stored, dict) else None
    context = {**door_context(request, performed.result, listed=False, query=""), "answer": answer}
    return render(request, "events/check_in.html", context)


@require_POST
def check_in_attendee(request: HttpRequest, event_id: str) -> HttpResponse:
    """A typed or scanned ticket code (`ticket`), or a person chosen from the list (`attendee_id`): the
    one row takes either. A scan is the staff member's own act: nothing to confirm."""
    ticket = request.POST.get("ticket", "").strip()
    data: dict[str, Any] = {"event_id": event_id}
    if ticket:
        data["ticket"] = ticket
    else:
        data["attendee_id"] = request.POST.get("attendee_id") or None
    performed = perform(ACTIONS["check_in_attendee"], page_caller(request), data)
    return _answered(request, event_id, performed, answer_of_check_in(performed, scanned=bool(ticket)))


@require_POST
def undo_check_in(request: HttpRequest, event_id: str) -> HttpResponse:
    """Take back a check-in made by mistake (the button on the admitted answer)."""
    data = {"event_id": event_id, "attendee_id": request.POST.get("attendee_id") or None}
    performed = perform(ACTIONS["undo_check_in"], page_caller(request), data)
    return _answered(request, event_id, performed, _answer_of_undo(performed))


@require_POST
def find_attendee(request: HttpRequest, event_id: str) -> HttpResponse:
    """Find people by name or e-mail (the search form), or draw the counts again (the page's refresh,
    which says whether a list is shown: `list`)."""
    query = request.POST.get("query", "")
    listed = request.POST.get("list") == "1"
    performed = perform(
        ACTIONS["find_attendee"], page_caller(request), {"event_id": event_id, "query": query}
    )
    if (barrier := _barrier(request, event_id, performed.error)) is not None:
        return barrier
    if performed.error is not None:  # a query longer than the field allows
        if request.htmx:
            return HttpResponse(status=204)
        raise Http404(str(performed.error)) from performed.error
    if request.htmx:
        return live_part(request, event_id, performed.result, listed=listed, query=query)
    context = door_context(request, performed.result, listed=True, query=query)
    return render(request, "events/check_in.html", context)


# ── helpers ───────────────────────────────────────────────────────────────────────────────────


def _answered(request: HttpRequest, event_id: str, performed: Performed, answer: DoorAnswer) -> HttpResponse:
    if (barrier := _barrier(request, event_id, performed.error)) is not None:
        return barrier
    if request.htmx:
        response = answer_part(request, event_id, answer)
        if answer.changed:
            response["HX-Trigger"] = DOOR_CHANGED
        return response
    request.session[ANSWER_SESSION_KEY.format(event_id=event_id)] = asdict(answer)
    return redirect(CHECK_IN, event_id=event_id)


def _barrier(request: HttpRequest, event_id: str, error: DomainError | None) -> HttpResponse | None:
    """What stops a person before the page: sign in first, not this event's staff (403), no such
    event (404). None: the error (if any) is an answer the page shows."""
    if isinstance(error, EventNotFound):
        raise Http404(str(error)) from error
    if isinstance(error, InvalidInput) and "event_id" in error.extra.get("fields", {}):
        raise Http404(str(error)) from error
    page = reverse(CHECK_IN, kwargs={"event_id": event_id}) if error is not None else ""
    if isinstance(error, AuthRequired):
        login = redirect_to_login(page)
        if request.htmx:
            return HttpResponse(status=204, headers={"HX-Redirect": login["Location"]})
        return login
    if isinstance(error, NotEventStaff):
        visitor = request.visitor
        context = {
            "forbidden": True,
            "event_id": event_id,
            "refusal": str(error.person_message),
            "webmcp_state": door_state(visitor, door_staff=False),
        }
        response = render(request, "events/check_in.html", context, status=403)
        if request.htmx:
            response["HX-Refresh"] = "true"  # the whole page, which now says so
        return response
    return None
