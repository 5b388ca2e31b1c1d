"""Calendar feeds (RFC 5545) for calendar programs to subscribe to (an interface, as the pages are).

- `/calendar/<token>.ics`: a person's registrations, confirmed and cancelled (STATUS:CANCELLED), at a
  secret address (`CalendarFeed`); `?saved=1` adds their saved events they are not registered for
  (STATUS:TENTATIVE, shown free). The person gets and resets the address on My events.
- `/events/feed.ics`: the published upcoming events matching the search conditions of the query
  string, validated by the API's own `EventSearchInput` and found by `selectors.search_events`; an
  invalid or unknown parameter is the 400 envelope.

Plain files, not actions: reading a feed performs no action row and writes no Activity row; the one
write, a person getting or resetting their own address, performs its row (`reset_calendar_feed`; no
tool offers it).
The entries are `events.mail.ics`'s, the same UID as the single event's file.

Each answer is conditional (`core.conditional`, as the pages' and the API's reads are): the ETag and
Last-Modified come from the newest change of what the feed shows, read in one or two aggregate
statements before anything is built, so a calendar program's hourly refresh usually costs those and a
304. Last-Modified is given only where every change leaves a time behind: a removed save does not, so
`?saved=1` answers with an ETag only.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.db.models import Count, Max, Q
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe
from rest_framework import serializers

from core import conditional
from core.conditional import Validators
from core.envelope import current_state_version, error_envelope
from core.errors import InvalidInput
from core.inputs import validated_input
from core.visitors import Mode, Visitor, claimed_mode

from .. import selectors
from ..actions import ACTIONS, Caller, perform
from ..choices import EventStatus, Level, Location, Price
from ..contract import EventSearchInput
from ..mail import ics
from ..models import CalendarFeed, Event, Registration, RetiredEventId, SavedEvent

CONTENT_TYPE = "text/calendar; charset=utf-8"
#: How often calendar programs are asked to fetch a feed again; the public feed's max-age.
REFRESH = timedelta(hours=1)
#: The public feed lists at most this many events, the soonest first.
PUBLIC_FEED_LIMIT = 200


class PersonalFeedInput(serializers.Serializer):
    """The personal feed's one parameter."""

    saved = serializers.BooleanField(required=False, default=False, help_text="Add the saved events.")


# ── /calendar/<token>.ics ─────────────────────────────────────────────────────────────────────


@require_safe
def personal_feed(request: HttpRequest, token: str) -> HttpResponseBase:
    feed = CalendarFeed.objects.select_related("user").filter(token=token, user__is_active=True).first()
    if feed is None:
        raise Http404("No calendar feed has this address.")
    try:
        saved = validated_input(PersonalFeedInput, request.GET)["saved"]
    except InvalidInput as error:
        return _refusal(request, error)
    visitor = Visitor(user=feed.user)
    state = _personal_state(request, feed, visitor, saved=saved)
    # The person's own: no shared cache keeps it; their program asks again with the ETag each time.
    response = _conditional(
        request, state, lambda: _personal_calendar(request, visitor, saved=saved), shared=False
    )
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _personal_state(request: HttpRequest, feed: CalendarFeed, visitor: Visitor, *, saved: bool) -> Validators:
    """Registrations are never deleted (cancelling keeps the row; their events are protected), and every
    change of one or of its event is saved with its time, whatever the event's status now: so the
    newest of those times is when the feed last changed."""
    registrations = Registration.objects.filter(user=feed.user).aggregate(
        count=Count("pk"), changed=Max("updated_at"), event_changed=Max("event__updated_at")
    )
    parts: list[Any] = ["personal", feed.pk, feed.created_at, saved, registrations]
    times = [feed.created_at, registrations["changed"], registrations["event_changed"]]
    last_modified: datetime | None = max(time for time in times if time is not None)
    if saved:
        saves = SavedEvent.objects.filter(user=feed.user).aggregate(
            count=Count("pk"), changed=Max("created_at"), event_changed=Max("event__updated_at")
        )
        # A removed save leaves no time behind, but raises the person's stateVersion.
        parts += [saves, selectors.state_version(visitor=visitor)]
        last_modified = None
    return Validators(etag=conditional.etag(request, parts), last_modified=last_modified)


def _personal_calendar(request: HttpRequest, visitor: Visitor, *, saved: bool) -> bytes:
    chosen: dict[int, Any] = {}
    for registration in selectors.list_registrations(visitor=visitor):  # newest change first
        current = chosen.get(registration.event_id)
        if current is None or (registration.is_active and not current.is_active):
            chosen[registration.event_id] = registration
    entries = [
        ics.FeedEntry(
            event=registration.event,
            url=_event_url(request, registration.event),
            cancelled=not registration.is_active,
            changed_at=registration.updated_at,
        )
        for registration in chosen.values()
        if _public(registration.event)
    ]
    if saved:
        entries += [
            ics.FeedEntry(event=event, url=_event_url(request, event), tentative=True)
            for event in selectors.list_saved(visitor=visitor)
            if event.pk not in chosen
        ]
    entries.sort(key=lambda entry: (entry.event.starts_at, entry.event.pk))
    site = settings.SITE_NAME
    name = _("%(site)s: my events and saved events") if saved else _("%(site)s: my events")
    return ics.feed_calendar(entries, name=name % {"site": site}, refresh=REFRESH)


def _public(event: Event) -> bool:
    """Whether an event may be shown (a registration's event may have been unpublished since)."""
    return event.status in (EventStatus.PUBLISHED, EventStatus.CANCELLED)


@require_POST
def reset_calendar_feed(request: HttpRequest) -> HttpResponse:
    """Gives the signed-in person a calendar address, or a new one in place of the old, which then
    answers 404 (the `reset_calendar_feed` row). The new address is shown on My events."""
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("me"))
    caller = Caller(visitor=request.visitor, channel=Mode.UI, claimed=claimed_mode(request))  # type: ignore[attr-defined]
    performed = perform(ACTIONS["reset_calendar_feed"], caller, {})
    if performed.error is not None:
        raise performed.error
    if performed.result.created:
        messages.success(request, _("Your calendar address is ready: add it to your calendar program."))
    else:
        messages.success(
            request,
            _("Your calendar address was replaced. The old one no longer works: subscribe with the new one."),
        )
    return redirect(f"{reverse('me')}#calendar-heading")


# ── /events/feed.ics ──────────────────────────────────────────────────────────────────────────


@require_safe
def public_feed(request: HttpRequest) -> HttpResponseBase:
    try:
        conditions = validated_input(EventSearchInput, request.GET)
    except InvalidInput as error:
        return _refusal(request, error)
    state = _public_state(request, conditions)
    return _conditional(
        request, state, lambda: _public_calendar(request, conditions), shared=True, max_age=REFRESH
    )


def _public_state(request: HttpRequest, conditions: dict[str, Any]) -> Validators:
    """The catalogue's newest change, whatever the conditions: an event edited, published, unpublished
    or cancelled (its `updated_at`), one that has started and so left the upcoming ones, or one deleted.
    Conservative (any event's change is every search's), and two small statements."""
    now = timezone.now()
    catalogue = Event.objects.aggregate(
        changed=Max("updated_at"),
        started=Max("starts_at", filter=Q(status=EventStatus.PUBLISHED, starts_at__lte=now)),
    )
    retired = RetiredEventId.objects.aggregate(retired=Max("retired_at"))["retired"]
    times = [catalogue["changed"], catalogue["started"], retired]
    known = [time for time in times if time is not None]
    parts = ["public", sorted(conditions.items()), times]
    return Validators(etag=conditional.etag(request, parts), last_modified=max(known) if known else None)


def _public_calendar(request: HttpRequest, conditions: dict[str, Any]) -> bytes:
    result = selectors.search_events(
        visitor=Visitor(), **conditions, limit=PUBLIC_FEED_LIMIT, with_seats=True
    )
    entries = [ics.FeedEntry(event=event, url=_event_url(request, event)) for event in result.events]
    return ics.feed_calendar(entries, name=_public_name(conditions), refresh=REFRESH)


def _public_name(conditions: dict[str, Any]) -> str:
    """The site's name and the conditions, e.g. "AgentReady Events: Taipei · Free · “WebMCP”"."""
    labels = [
        str(choices(value).label)
        for name, choices in (("location", Location), ("price", Price), ("level", Level))
        if (value := conditions.get(name))
    ]
    if query := (conditions.get("query") or "").strip():
        labels.append(f"“{query}”")
    return f"{settings.SITE_NAME}: {' · '.join(labels)}" if labels else settings.SITE_NAME


# ── helpers ───────────────────────────────────────────────────────────────────────────────────


def _conditional(
    request: HttpRequest,
    state: Validators,
    build: Callable[[], bytes],
    *,
    shared: bool,
    max_age: timedelta | None = None,
) -> HttpResponseBase:
    """304 when the request's If-None-Match (or, without it, If-Modified-Since) still holds; otherwise
    the feed `build` makes. Both answers carry the ETag and Last-Modified."""
    return conditional.answer(
        request,
        state,
        lambda: HttpResponse(build(), content_type=CONTENT_TYPE),
        shared=shared,
        max_age=int(max_age.total_seconds()) if max_age is not None else None,
    )


def _event_url(request: HttpRequest, event: Event) -> str:
    return request.build_absolute_uri(reverse("event-detail", kwargs={"event_id": event.public_id}))


def _refusal(request: HttpRequest, error: InvalidInput) -> HttpResponse:
    body = error_envelope(error, state_version=current_state_version(request))
    return JsonResponse(body, status=error.http_status)
