"""Read use cases (layer 2). Every read rule lives here; pages, API and tools call these functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import (
    DateTimeField,
    Exists,
    F,
    Func,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.errors import AuthRequired
from core.statements import StatementCache
from core.visitors import Visitor

from .choices import (
    ACTIVE_WAITLIST,
    HOLDING_SEAT,
    EventStatus,
    NotificationKind,
    RegistrationStatus,
    WaitlistStatus,
)
from .errors import EventNotFound, PaymentNotFound
from .models import (
    Event,
    EventStaff,
    Notification,
    Registration,
    RetiredEventId,
    SavedEvent,
    VisitorState,
    WaitlistEntry,
    count_rows,
)
from .policies import EventFacts, StaffFacts, VisitorFacts, may_offer, offers_stop_before_start

QUERY_MAX_LENGTH = 100
DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 50
#: Far beyond any catalogue, and small enough for every database's OFFSET (SQLite's is 64-bit).
MAX_OFFSET = 1_000_000_000
#: Search pages up to this offset use compiled statements (core/statements.py); deeper ones the ORM.
MAX_CACHED_OFFSET = 200
COUNT_ALL = Func(template="COUNT(*)", output_field=IntegerField())
#: What a search result's event carries without seats: the API's and the tools' event summary.
SUMMARY_FIELDS = ("public_id", "title", "summary", "starts_at", "location", "price", "level")


@dataclass(frozen=True)
class SearchResult:
    events: list  # Event instances (with_seats) or SUMMARY_FIELDS named tuples
    total: int
    applied_filters: dict[str, str]
    limit: int
    offset: int
    saved_ids: frozenset[str] = field(default_factory=frozenset)
    #: `search_revision` as the page's own statement read it (`with_revision=True` and a page that is
    #: not empty); None otherwise.
    revision: tuple[str | None, ...] | None = None

    @property
    def count(self) -> int:
        return len(self.events)


@dataclass(frozen=True)
class WaitlistPlace:
    """A person's place on an event's waiting list: 1-based, and the seat held for them, if any."""

    entry: WaitlistEntry
    position: int

    @property
    def event(self) -> Event:
        return self.entry.event

    @property
    def offer_expires_at(self) -> datetime | None:
        return self.entry.expires_at if self.entry.has_offer else None


@dataclass(frozen=True)
class EventDetails:
    event: Event
    is_saved: bool
    registration: Registration | None
    waitlist: WaitlistPlace | None = None

    @property
    def is_registered(self) -> bool:
        return self.registration is not None and self.registration.is_active

    @property
    def has_ticket(self) -> bool:
        """Whether the person holds a valid ticket (what an agent may know of it: never the code)."""
        return self.is_registered and bool(self.registration and self.registration.ticket_code)

    def visitor_facts(self, *, signed_in: bool) -> VisitorFacts:
        """The visitor as the policies see them for this event (registered, waiting, holding an offer)."""
        place = self.waitlist
        return VisitorFacts(
            signed_in=signed_in,
            registered=self.is_registered,
            waiting=place is not None,
            holds_offer=place is not None and place.offer_expires_at is not None,
        )


def state_version(*, visitor: Visitor) -> int:
    """The visitor's current stateVersion (0 before their first change)."""
    if not visitor.key:
        return 0
    rows = STATE_VERSION.rows("version", {"visitor_key": visitor.key})
    return rows[0].version if rows else 0


def _state_version(shape: Any, values: Mapping[str, Any]) -> QuerySet:
    rows = VisitorState.objects.filter(visitor_key=values["visitor_key"])
    return rows.values_list("version", named=True)[:1]


#: Compiled once per process (core/statements.py): every write's envelope and every refusal's carries
#: the stateVersion, so a refused rush attempt reads it after its seat read, and building it in the ORM
#: cost about as much as the seat read (the row "rush attempts/s ÷ API search throughput",
#: bench/README.md, "Stock pieces").
STATE_VERSION = StatementCache(_state_version)


def catalogue_revision(*, now: datetime | None = None) -> tuple[Any, ...]:
    """What every search of the catalogue shows, with its seats (the list page's cards), as values
    that change whenever any answer could: an event created, edited, published, unpublished or
    cancelled (the newest `updated_at`, which every save sets), deleted (every deletion retires its
    id: the newest `retired_at`), one that has started and so left the upcoming ones, a seat taken or
    freed (the confirmed registrations' count and their newest change), a seat held or given back by
    the waiting list (the offers' count, the newest offer, end and joining). Conservative: any event's
    change is every search's. Read before an answer is built, for its ETag (core/conditional.py).

    One statement, written here rather than in the ORM, whose `aggregate()` reads one table: scalar
    subqueries, the events' from indexes (their newest change: migration 0017), the registrations' and
    the waiting list's each from one pass over its table."""
    now = now or timezone.now()
    events, registrations, entries = _table(Event), _table(Registration), _table(WaitlistEntry)
    starts = _column(Event, "starts_at")
    parts = [
        f"SELECT MAX({_column(Event, 'updated_at')}) FROM {events}",
        f"SELECT MAX({starts}) FROM {events} WHERE {starts} <= %s",
        f"SELECT MAX({_column(RetiredEventId, 'retired_at')}) FROM {_table(RetiredEventId)}",
        f"SELECT COUNT(*) FROM {registrations} WHERE {_column(Registration, 'status')} = %s",
        f"SELECT MAX({_column(Registration, 'updated_at')}) FROM {registrations}",
        f"SELECT COUNT(*) FROM {entries} WHERE {_column(WaitlistEntry, 'status')} = %s",
        *(f"SELECT MAX({_column(WaitlistEntry, name)}) FROM {entries}" for name in WAITLIST_TIMES),
    ]
    params = [
        connection.ops.adapt_datetimefield_value(now),
        RegistrationStatus.CONFIRMED.value,
        WaitlistStatus.OFFERED.value,
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"({part})" for part in parts), params)
        return tuple(cursor.fetchone())


def kept_catalogue_revision() -> tuple[Any, ...]:
    """`catalogue_revision` as this process read it at most `CATALOGUE_REVISION_SECONDS` ago, for the
    list page of a visitor without an account. Their list may show a change that long after it was
    made (docs/api.md, "Conditional reads"), and in exchange their 304 reads nothing from the
    database at all: the revision statement is what a revalidation otherwise costs. A signed-in
    visitor reads the revision each time, so sees every change at once; 0 turns the keeping off."""
    return _kept(KEPT_REVISION_KEY, catalogue_revision)


def kept_event_revision(*, event_id: str) -> tuple[Any, ...] | None:
    """`event_revision` as this process read it at most `CATALOGUE_REVISION_SECONDS` ago, for an event's
    page of a visitor without an account, as `kept_catalogue_revision` is for the list (a missing
    event is read each time). The event page's 304 is then no statement either: once its page had
    become about three times cheaper (`EVENT_DETAILS`), a 304 that still read the revision cost more
    than the row "conditional GET ÷ full GET, event page" allows (0.34 against ≤ 0.33,
    bench/README.md, "Stock pieces")."""
    return _kept(f"{KEPT_REVISION_KEY}:{event_id}", lambda: event_revision(event_id=event_id))


def _kept(key: str, read: Any) -> Any:
    """`read()` kept in this process's page cache for `CATALOGUE_REVISION_SECONDS` (None is not kept)."""
    seconds = settings.CATALOGUE_REVISION_SECONDS
    if seconds <= 0:
        return read()
    cache = caches[settings.PAGE_CACHE]
    kept = cache.get(key)
    if kept is None:
        kept = read()
        if kept is not None:
            cache.set(key, kept, seconds)
    return kept


#: The page cache's key of `kept_catalogue_revision`, and with `:<event id>` of `kept_event_revision`
#: (the cache is each process's own memory).
KEPT_REVISION_KEY = "catalogue-revision"


#: The waiting list's times: every change of an entry leaves one behind.
WAITLIST_TIMES = ("joined_at", "offered_at", "ended_at")


def _table(model: Any) -> str:
    """A model's table, quoted for the revisions' statements."""
    return connection.ops.quote_name(model._meta.db_table)


def _column(model: Any, name: str) -> str:
    """A model field's column, quoted for the revisions' statements."""
    return connection.ops.quote_name(model._meta.get_field(name).column)


def search_revision(*, now: datetime | None = None) -> tuple[Any, ...]:
    """What an API search's answer shows of the catalogue: `catalogue_revision` without the seats,
    which its summaries do not carry, as values that change whenever the answer could: an event
    created, edited, published, unpublished or cancelled (the newest `updated_at`, which every save
    sets), deleted (every deletion retires its id: the newest `retired_at`), or started (the newest
    start now past). The API search reads it on every request, so each part is one probe of an index
    (migration 0017), whatever the size of the catalogue; the count of all events would be a pass
    over one (bench/profiles/README.md)."""
    now = now or timezone.now()
    events, starts = _table(Event), _column(Event, "starts_at")
    parts = [
        f"SELECT MAX({_column(Event, 'updated_at')}) FROM {events}",
        f"SELECT MAX({starts}) FROM {events} WHERE {starts} <= %s",
        f"SELECT MAX({_column(RetiredEventId, 'retired_at')}) FROM {_table(RetiredEventId)}",
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT " + ", ".join(f"({part})" for part in parts),
            [connection.ops.adapt_datetimefield_value(now)],
        )
        return _instants(cursor.fetchone())


#: `search_revision`'s values as the API search's page statement reads them beside its rows
#: (`search_events(with_revision=True)`): a 200 needs no statement of its own for its ETag.
REVISION_FIELDS = ("revision_changed", "revision_started", "revision_retired")


def _revision_columns(now: datetime) -> dict[str, Subquery]:
    """`search_revision`'s three parts as scalar subqueries of a page statement, in its order."""

    def newest(rows: QuerySet, name: str) -> Subquery:
        latest = Func(F(name), function="MAX", output_field=DateTimeField())
        return Subquery(rows.order_by().annotate(newest=latest).values("newest"))

    return {
        "revision_changed": newest(Event.objects.all(), "updated_at"),
        "revision_started": newest(Event.objects.filter(starts_at__lte=now), "starts_at"),
        "revision_retired": newest(RetiredEventId.objects.all(), "retired_at"),
    }


def _instants(values: Iterable[Any]) -> tuple[str | None, ...]:
    """Moments as one text whichever way they were read: a raw cursor gives SQLite's text, the ORM
    an aware datetime; a revision read alone and one read with a page must give the same ETag."""
    instants: list[str | None] = []
    for value in values:
        if value is None:
            instants.append(None)
            continue
        moment = datetime.fromisoformat(value) if isinstance(value, str) else value
        instants.append((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC).isoformat())
    return tuple(instants)


def question_form(*, event_id: str) -> list[dict[str, Any]]:
    """The public event's registration questions as kept in its row (`Event.question_form`); none for
    an event that does not exist (the action then answers its 404)."""
    found = Event.objects.public().filter(public_id=event_id).values_list("question_form", flat=True).first()
    return found or []


def event_revision(*, event_id: str, now: datetime | None = None) -> tuple[Any, ...] | None:
    """What one event's page and answers show of it, as values that change whenever they could: the
    event's own change, its seats (confirmed registrations, offers) and their newest changes, its
    waiting list's newest change (a position moves), and the two moments the clock changes what may
    be done (the start; the last offer, when the waiting list closes). None for no such public event
    (a draft's id answers as a missing one's, `If-None-Match: *` included).

    One statement through the event's own indexes, whatever the size of the catalogue, compiled once
    (core/statements.py): the ORM's build and compile of its subqueries cost more than the event
    page's 304 may ("conditional GET ÷ full GET, event page": 0.48 against ≤ 0.33 without it,
    bench/README.md, "Stock pieces")."""
    now = now or timezone.now()
    rows = EVENT_REVISION.rows(None, {"event_id": event_id})
    if not rows:
        return None
    [row] = rows
    return (*row, row.starts_at <= now, now >= row.starts_at - offers_stop_before_start())


def _event_revision(shape: Any, values: Mapping[str, Any]) -> QuerySet:
    here = OuterRef("pk")
    registrations = Registration.objects.filter(event=here)
    entries = WaitlistEntry.objects.filter(event=here)
    return (
        Event.objects.public()  # a draft is no event to anyone here, its revision neither
        .filter(public_id=values["event_id"])
        .annotate(
            confirmed=count_rows(registrations.filter(status=RegistrationStatus.CONFIRMED)),
            registrations_changed=_newest(registrations, "updated_at"),
            offered=count_rows(entries.filter(status=WaitlistStatus.OFFERED)),
            **{f"waitlist_{name}": _newest(entries, name) for name in WAITLIST_TIMES},
        )
        .values_list(
            "pk",
            "status",
            "updated_at",
            "starts_at",
            "confirmed",
            "registrations_changed",
            "offered",
            *(f"waitlist_{name}" for name in WAITLIST_TIMES),
            named=True,
        )
    )


EVENT_REVISION = StatementCache(_event_revision)


def _newest(rows: QuerySet, name: str) -> Subquery:
    """The newest `name` among one event's `rows` (filtered by an OuterRef), or NULL."""
    return Subquery(rows.order_by().values("event").annotate(newest=Max(name)).values("newest"))


def search_events(
    *,
    visitor: Visitor,
    query: str | None = None,
    location: str | None = None,
    price: str | None = None,
    level: str | None = None,
    limit: int = DEFAULT_PAGE_SIZE,
    offset: int = 0,
    with_seats: bool = False,
    with_revision: bool = False,
) -> SearchResult:
    """Published, upcoming events matching every given condition, ordered by start.

    Conditions are never relaxed: no match is a success with count 0. `appliedFilters` echoes exactly
    the conditions used, so a caller can tell the person what matched nothing.

    `with_seats=True` gives the pages' cards full events with their seat counts. Otherwise the page
    is `SUMMARY_FIELDS` rows (named tuples), all the API's and the tools' answers carry: the seat
    subqueries and whole model instances were most of an API search's time
    (bench/profiles/README.md). `with_revision=True` reads `search_revision` in the same statement
    (the API search's ETag), into `SearchResult.revision` when the page has a row.
    """
    query = (query or "").strip()  # bounds are the input serializer's (EventSearchPageInput)
    filters = {
        name: value for name, value in (("location", location), ("price", price), ("level", level)) if value
    }
    now = timezone.now()
    # The API's page: the same statement, compiled once per shape (core/statements.py).
    values: dict[str, object] = {"now": now, **({"query": query} if query else {}), **filters}
    column = None
    if owner := saved_owner(visitor):
        [(column, values["owner"])] = owner.items()
    shape: tuple[Any, ...] = (limit, offset, column)
    # Deep pages are rare: each would only take a place in the cache from a common one.
    cached = offset <= MAX_CACHED_OFFSET
    page: list
    if with_seats:
        page = [_event_of(row) for row in _card_page(shape, values)]
    else:
        shape = (*shape, with_revision)
        page = SUMMARY_PAGE.rows(shape, values) if cached else list(_summary_page(shape, values))
    total = (
        page[0].total_matching
        if page
        else (_matching(now=now, query=query, filters=filters).count() if offset else 0)
    )
    applied = {"query": query, **filters} if query else dict(filters)
    return SearchResult(
        events=page,
        total=total,
        applied_filters=applied,
        limit=limit,
        offset=offset,
        saved_ids=frozenset(event.public_id for event in page if getattr(event, "visitor_saved", False)),
        revision=_instants(getattr(page[0], name) for name in REVISION_FIELDS)
        if with_revision and page and not with_seats
        else None,
    )


def get_event_details(*, visitor: Visitor, event_id: str) -> EventDetails:
    """A public event (published or cancelled) with the visitor's saved and registration state.

    One compiled statement (`EVENT_DETAILS`) reads the event, its seats, whether the visitor saved it
    and, for a person, whether they hold a registration or a place on its waiting list; only what
    they hold is then read (a person who has neither, as before registering: one statement, not three)."""
    owner = saved_owner(visitor)
    user = visitor.user
    values: dict[str, Any] = {"event_id": event_id}
    owner_column = None
    if owner is not None:
        [(owner_column, values["owner"])] = owner.items()
    if user is not None:
        values["user_id"] = user.pk
    rows = EVENT_DETAILS.rows((owner_column, user is not None), values)
    if not rows:
        raise EventNotFound()
    event = _event_of(rows[0])
    registration = place = None
    if user is not None and getattr(event, "visitor_registration", False):
        mine = Registration.objects.filter(user=user, event=event)
        registration = mine.order_by("-updated_at", "-id").first()
        if registration is not None:
            registration.event = event  # the page's answers and payment read it: not read again
    if user is not None and getattr(event, "visitor_waiting", False):
        entry = WaitlistEntry.objects.filter(user=user, event=event, status__in=ACTIVE_WAITLIST).first()
        if entry is not None:
            entry.event = event
            place = waitlist_place(entry)
    return EventDetails(
        event=event,
        is_saved=getattr(event, "visitor_saved", False),
        registration=registration,
        waitlist=place,
    )


def _event_details(shape: Any, values: Mapping[str, Any]) -> QuerySet:
    """`get_event_details`'s event: every column, its seats, and for the shape's owner of saves
    `visitor_saved`, for a person `visitor_registration` (any registration of theirs, cancelled ones
    too: the page says so) and `visitor_waiting` (an active place on its waiting list).
    `shape` is (owner column or None, a person or not)."""
    owner_column, person = shape
    events = Event.objects.public().with_seats().filter(public_id=values["event_id"])
    if owner_column is not None:
        events = events.annotate(visitor_saved=_saved_by({owner_column: values["owner"]}))
    if person:
        mine = {"event": OuterRef("pk"), "user_id": values["user_id"]}
        events = events.annotate(
            visitor_registration=Exists(Registration.objects.filter(**mine)),
            visitor_waiting=Exists(WaitlistEntry.objects.filter(**mine, status__in=ACTIVE_WAITLIST)),
        )
    return events.values_list(*EVENT_COLUMNS, *events.query.annotation_select, named=True)


#: Compiled once per shape (core/statements.py): an event's page reads it twice in a registration by a
#: browser without JavaScript (the page, and the page the form leads to), and its ORM build and compile
#: (nine subqueries) cost more than running it, which the row "registration by a browser without
#: JavaScript ÷ pretix's shop checkout" (≥ 20) does not allow (bench/README.md, "Stock pieces").
EVENT_DETAILS = StatementCache(_event_details)


def person_with_settings(user: Any) -> Any:
    """The signed-in person read again with the two one-row things My events shows (the reminder
    setting, the calendar feed): one statement, where reading each from the person is two."""
    return get_user_model().objects.select_related("preferences", "calendar_feed").get(pk=user.pk)


def waitlist_place(entry: WaitlistEntry) -> WaitlistPlace:
    """The entry's 1-based position among the event's active entries, first come, first served."""
    return WaitlistPlace(entry=entry, position=_ahead(entry.event_id, entry.joined_at, entry.pk) + 1)


def _ahead(event_pk: int, joined_at: datetime, pk: int) -> int:
    return WaitlistEntry.objects.filter(
        Q(joined_at__lt=joined_at) | Q(joined_at=joined_at, pk__lt=pk),
        event_id=event_pk,
        status__in=ACTIVE_WAITLIST,
    ).count()


def list_waitlist(*, visitor: Visitor) -> list[WaitlistPlace]:
    """The signed-in visitor's places on waiting lists, offers first, then by the event's start."""
    if visitor.user is None:
        raise AuthRequired()
    ahead = WaitlistEntry.objects.filter(
        Q(joined_at__lt=OuterRef("joined_at")) | Q(joined_at=OuterRef("joined_at"), pk__lt=OuterRef("pk")),
        event=OuterRef("event"),
        status__in=ACTIVE_WAITLIST,
    )
    entries = (
        WaitlistEntry.objects.filter(user=visitor.user, status__in=ACTIVE_WAITLIST)
        .select_related("event")
        .annotate(ahead=count_rows(ahead))
    )
    places = [WaitlistPlace(entry=entry, position=entry.ahead + 1) for entry in entries]
    return sorted(
        places, key=lambda place: (not place.entry.has_offer, place.event.starts_at, place.entry.pk)
    )


def _matching(*, now: datetime, query: str, filters: dict[str, str]):
    """Published events after `now` that match the keyword and every filter."""
    return Event.objects.published().upcoming(now).matching(query).filter(**filters)


def _page(annotated, events, *, owner: dict[str, object] | None):
    """`annotated` in start order, with `visitor_saved` for an owner of saves and the total of
    `events`: the total rides along as a subquery PostgreSQL and SQLite run once (one statement, not
    a count and then a page; only a page past the end needs a count of its own)."""
    if owner is not None:
        annotated = annotated.annotate(visitor_saved=_saved_by(owner))
    total = Subquery(events.order_by().annotate(n=COUNT_ALL).values("n"))
    return annotated.annotate(total_matching=total).order_by("starts_at", "id")


def _summary_page(shape: Any, values: Mapping[str, Any]) -> QuerySet:
    """The API's and the tools' search page: `SUMMARY_FIELDS` rows, the total and, for an owner of
    saves, `visitor_saved`, and with a revision, `REVISION_FIELDS`. `shape` is (limit, offset, owner
    column or None, with a revision)."""
    limit, offset, owner_column, with_revision = shape
    filters = {name: values[name] for name in ("location", "price", "level") if name in values}
    events = _matching(now=values["now"], query=values.get("query", ""), filters=filters)
    owner = {owner_column: values["owner"]} if owner_column else None
    saved = ("visitor_saved",) if owner else ()
    page = _page(events, events, owner=owner)
    revision: tuple[str, ...] = ()
    if with_revision:
        page, revision = page.annotate(**_revision_columns(values["now"])), REVISION_FIELDS
    fields = (*SUMMARY_FIELDS, *saved, "total_matching", *revision)
    return page.values_list(*fields, named=True)[offset : offset + limit]


#: Compiled once per shape (core/statements.py): the API search's ORM build and compile cost more than
#: the row "API search throughput ÷ floor view" (≥ 0.75) allows (bench/README.md, "Stock pieces").
SUMMARY_PAGE = StatementCache(_summary_page)
#: The columns of a whole event, as the ORM loads a model instance.
EVENT_COLUMNS = tuple(field.attname for field in Event._meta.concrete_fields)


def _card_page(shape: Any, values: Mapping[str, Any]) -> QuerySet:
    """The pages' search page: every column of each event, its seats (`with_seats`), the total and,
    for an owner of saves, `visitor_saved`, as rows a compiled statement can give back
    (`_event_of` makes them events). The ORM compiles it on each call: the page's drawn region is
    kept (`{% cache %}` in events/event_list.html), so a list page seldom reaches it."""
    limit, offset, owner_column = shape
    filters = {name: values[name] for name in ("location", "price", "level") if name in values}
    events = _matching(now=values["now"], query=values.get("query", ""), filters=filters)
    owner = {owner_column: values["owner"]} if owner_column else None
    page = _page(events.with_seats(), events, owner=owner)
    annotations = tuple(page.query.annotation_select)
    return page.values_list(*EVENT_COLUMNS, *annotations, named=True)[offset : offset + limit]


def _event_of(row: Any) -> Event:
    """The event of a `_card_page` row, with its annotations, as the ORM would have loaded it."""
    values = row._asdict()
    event = Event.from_db(DEFAULT_DB_ALIAS, EVENT_COLUMNS, [values.pop(name) for name in EVENT_COLUMNS])
    event.__dict__.update(values)
    return event


def _saved_by(owner: dict[str, object]) -> Exists:
    """Whether the owner of saves saved the outer event."""
    return Exists(SavedEvent.objects.filter(event=OuterRef("pk"), **owner))


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
        registrations = registrations.filter(status__in=HOLDING_SEAT)
    # One statement: the registrations' cards and answers need no seat counts.
    return list(registrations.select_related("event").order_by("-updated_at", "-id"))


def saved_owner(visitor: Visitor) -> dict[str, object] | None:
    """The filter that selects the visitor's saves, or None when they cannot own any: one column and
    a plain value, which a compiled statement can bind too."""
    if visitor.user is not None:
        return {"user_id": visitor.user.pk}
    if visitor.token:
        return {"visitor_token": visitor.token}
    return None


def staff_facts(user, event: Event) -> StaffFacts:
    """`user`'s part in running `event` (None: a visitor, no part)."""
    if user is None:
        return StaffFacts()
    role = EventStaff.objects.filter(event=event, user=user).values_list("role", flat=True).first()
    return StaffFacts(superuser=bool(user.is_superuser), role=role)


# ── The worker's reads: where a sweep has work ──────────────────────────────────────────────────


def waitlists_with_work(*, now: datetime, event_pks: Iterable[int] | None = None) -> list[str]:
    """The public ids of the events whose waiting list the sweep must serve now: an offer whose time
    is up, or people waiting while a seat is free and seats still go to the list (`may_offer`). The
    sweep performs `offer_free_seats` on each (as the declared system actor), so an event with nothing
    to do costs no Activity row. Read without the locks; the row decides under its event's lock."""
    offered = WaitlistEntry.objects.filter(event=OuterRef("pk"), status=WaitlistStatus.OFFERED)
    waiting = WaitlistEntry.objects.filter(event=OuterRef("pk"), status=WaitlistStatus.WAITING)
    active = WaitlistEntry.objects.filter(event=OuterRef("pk"), status__in=ACTIVE_WAITLIST)
    events = Event.objects.filter(Exists(active))
    if event_pks is not None:
        events = events.filter(pk__in=list(event_pks))
    rows = (
        events.with_seats()
        .annotate(offer_due=Exists(offered.filter(expires_at__lte=now)), anyone_waiting=Exists(waiting))
        .order_by("pk")
    )
    due = []
    for event in rows:
        facts = EventFacts.of(event)  # its seats as `with_seats` counted them
        free = facts.seats_left is None or facts.seats_left > 0
        if event.offer_due or (event.anyone_waiting and free and may_offer(facts, now=now)):
            due.append(event.public_id)
    return due


def due_reminders(*, now: datetime) -> QuerySet[Registration]:
    """Every confirmed registration whose published event starts within REMINDER_HOURS (and has not
    started), whose person has not turned reminders off, and that has no reminder for its activation
    yet (a registration re-activated later has a new ticket, so it gets a reminder of its own). Each
    carries `last_language`: the one of the latest mail a change of theirs caused (else None)."""
    already = Notification.objects.filter(
        kind=NotificationKind.REMINDER,
        registration=OuterRef("pk"),
        created_at__gte=Coalesce(OuterRef("ticket_issued_at"), OuterRef("created_at")),
    )
    last_language = (
        Notification.objects.filter(user=OuterRef("user"))
        .exclude(kind__in=[NotificationKind.REMINDER, NotificationKind.PAYMENT_REMINDER])
        .order_by("-created_at", "-id")
        .values("language")[:1]
    )
    return (
        Registration.objects.filter(
            status=RegistrationStatus.CONFIRMED,
            event__status=EventStatus.PUBLISHED,
            event__starts_at__gt=now,
            event__starts_at__lte=now + timedelta(hours=settings.REMINDER_HOURS),
        )
        .exclude(user__preferences__reminders=False)  # accounts.Preferences: reminders turned off
        .exclude(Exists(already))
        .annotate(last_language=Subquery(last_language))
        .select_related("user", "event")
        .order_by("event__starts_at", "pk")
    )


def events_with_due_reminders(*, now: datetime) -> list[str]:
    """The public ids of the events that have reminders due now (`due_reminders`), in starting order."""
    ids = due_reminders(now=now).values_list("event__public_id", flat=True)
    return list(dict.fromkeys(ids))


def my_payment(*, visitor: Visitor, event_id: str) -> Registration:
    """The signed-in visitor's newest registration for the public event `event_id` that carries a
    payment (their payment page). Another person's, or none, is `PaymentNotFound`: the page is the
    person's own and its address names nobody."""
    if visitor.user is None:
        raise AuthRequired()
    registration = (
        Registration.objects.select_related("event")
        .filter(user=visitor.user, event__public_id=event_id, event__status__in=PUBLIC_STATUSES, amount__gt=0)
        .order_by("-updated_at", "-id")
        .first()
    )
    if registration is None:
        raise PaymentNotFound()
    return registration


PUBLIC_STATUSES = (EventStatus.PUBLISHED, EventStatus.CANCELLED)
