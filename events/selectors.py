"""Read use cases (layer 2). Every read rule lives here; pages, API and tools call these functions."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Prefetch

from .activity import records_activity
from .choices import Mode, RegistrationStatus
from .errors import AuthRequired, EventNotFound, InvalidInput
from .models import Event, Registration, SavedEvent, VisitorState
from .visitors import Visitor

QUERY_MAX_LENGTH = 100
DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 50


@dataclass(frozen=True)
class SearchResult:
    events: list[Event]
    total: int
    applied_filters: dict[str, str]
    limit: int
    offset: int
    saved_ids: frozenset[str] = field(default_factory=frozenset)

    @property
    def count(self) -> int:
        return len(self.events)


@dataclass(frozen=True)
class EventDetails:
    event: Event
    is_saved: bool
    registration: Registration | None

    @property
    def is_registered(self) -> bool:
        return self.registration is not None and self.registration.is_active


def state_version(*, visitor: Visitor) -> int:
    """The visitor's current stateVersion (0 before their first change)."""
    if not visitor.key:
        return 0
    return VisitorState.objects.filter(visitor_key=visitor.key).values_list("version", flat=True).first() or 0


def saved_ids(*, visitor: Visitor, among: list[Event] | None = None) -> frozenset[str]:
    """Public ids the visitor has saved, optionally restricted to `among` (one query)."""
    owner = saved_owner(visitor)
    if owner is None:
        return frozenset()
    saves = SavedEvent.objects.filter(**owner)
    if among is not None:
        saves = saves.filter(event__in=[event.pk for event in among])
    return frozenset(saves.values_list("event__public_id", flat=True))


@records_activity("search_events")
def search_events(
    *,
    visitor: Visitor,
    mode: Mode,
    query: str | None = None,
    location: str | None = None,
    price: str | None = None,
    level: str | None = None,
    limit: int = DEFAULT_PAGE_SIZE,
    offset: int = 0,
) -> SearchResult:
    """Published, upcoming events matching every given condition, ordered by start.

    Conditions are never relaxed: no match is a success with count 0. `appliedFilters` echoes exactly
    the conditions used, so a caller can tell the person what matched nothing.
    """
    query = (query or "").strip()
    if len(query) > QUERY_MAX_LENGTH:
        raise InvalidInput(extra={"fields": {"query": [f"At most {QUERY_MAX_LENGTH} characters."]}})
    if not 1 <= limit <= MAX_PAGE_SIZE or offset < 0:
        raise InvalidInput(extra={"fields": {"limit": [f"Between 1 and {MAX_PAGE_SIZE}."]}})
    filters = {
        name: value for name, value in (("location", location), ("price", price), ("level", level)) if value
    }
    events = Event.objects.published().upcoming().matching(query).filter(**filters)
    total = events.count()
    page = list(events.with_seats().order_by("starts_at", "id")[offset : offset + limit]) if total else []
    applied = {"query": query, **filters} if query else dict(filters)
    return SearchResult(
        events=page,
        total=total,
        applied_filters=applied,
        limit=limit,
        offset=offset,
        saved_ids=saved_ids(visitor=visitor, among=page) if page else frozenset(),
    )


@records_activity("get_event_details")
def get_event(*, visitor: Visitor, mode: Mode, event_id: str) -> EventDetails:
    """A public event (published or cancelled) with the visitor's saved and registration state."""
    event = Event.objects.public().with_seats().filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    owner = saved_owner(visitor)
    is_saved = owner is not None and SavedEvent.objects.filter(event=event, **owner).exists()
    registration = None
    if visitor.user is not None:
        registration = (
            Registration.objects.filter(user=visitor.user, event=event).order_by("-updated_at", "-id").first()
        )
    return EventDetails(event=event, is_saved=is_saved, registration=registration)


def list_saved(*, visitor: Visitor) -> list[Event]:
    """The visitor's saved events that are still visible, newest save first, with seats annotated."""
    owner = saved_owner(visitor)
    if owner is None:
        return []
    return list(
        Event.objects.public()
        .with_seats()
        .filter(**{f"saves__{key}": value for key, value in owner.items()})
        .order_by("-saves__created_at", "-id")
    )


def list_registrations(*, visitor: Visitor, include_cancelled: bool = True) -> list[Registration]:
    """The signed-in visitor's registrations, newest first. Registrations need an account."""
    if visitor.user is None:
        raise AuthRequired()
    registrations = Registration.objects.filter(user=visitor.user)
    if not include_cancelled:
        registrations = registrations.filter(status=RegistrationStatus.CONFIRMED)
    return list(
        registrations.prefetch_related(Prefetch("event", queryset=Event.objects.with_seats())).order_by(
            "-updated_at", "-id"
        )
    )


def saved_owner(visitor: Visitor) -> dict[str, object] | None:
    """The filter that selects the visitor's saves, or None when they cannot own any."""
    if visitor.user is not None:
        return {"user": visitor.user}
    if visitor.token:
        return {"visitor_token": visitor.token}
    return None
