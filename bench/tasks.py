"""The Django side of the bench, run by `run.py` in a child process against one bench database.

    python -m bench.tasks populate --events 10000 --demo --contention-file FILE
    python -m bench.tasks queries
    python -m bench.tasks contention-check --event evt-bench-contention evt-bench-contention-2
    python -m bench.tasks waitlist-race
    python -m bench.tasks question-queries
    python -m bench.tasks payments --registrations 10000 --events 100 --bank-small 1000 --bank-large 10000
    python -m bench.tasks populate --events 0 --activity 1000000 --eval-runs 12
    python -m bench.tasks dashboard --requests 20
    python -m bench.tasks overdue-payments --events 40 --seats 5

The database is the one in DATABASE_URL (run.py points it at a bench database, never the project's).
Each command prints one JSON object on its last line of output; run.py reads that line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.hashers import make_password  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench import registration_form  # noqa: E402
from bench.figures.scale import PLANTED_WORDS, RARE_COUNT  # noqa: E402
from bench.sessions import signed_in_session  # noqa: E402
from core.visitors import Visitor  # noqa: E402
from events import actions, demo_data  # noqa: E402
from events.activity import recount  # noqa: E402
from events.choices import HOLDING_SEAT, EventStatus, Level, Location, Price, RegistrationStatus  # noqa: E402
from events.models import (  # noqa: E402
    Activity,
    ActivityCount,
    Event,
    Registration,
    SavedEvent,
    TicketType,
    WaitlistEntry,
)
from events.services.ledger import recount_seats  # noqa: E402

User = get_user_model()

#: The search every latency figure uses: the demo's first scenario, "free beginner events in Taipei".
SEARCH = {"location": "taipei", "price": "free", "level": "beginner"}
CONTENTION_EVENT = "evt-bench-contention"
#: The questions every rush attempt answers (registration_form: a text, a choice, yes or no).
RUSH_QUESTIONS = 3
#: Two events alike but for their questions (both sell registration_form's paid types): the event
#: page's cost of a form of 20 questions.
QUESTION_PAGES = {0: "evt-bench-questions-0", 20: "evt-bench-questions-20"}
SINGLE_EVENT = "evt-bench-single"
SINGLE_WORD = "獨一無二"  # in the title of SINGLE_EVENT only: a search that finds exactly one event
BATCH = 2000


# ---- data --------------------------------------------------------------------------------------


def bench_event(n: int, *, base) -> Event:
    """The n-th bench event: published, upcoming, every location × price × level (period 18).

    Titles and summaries are the demo catalogue's, so pages and payloads have realistic sizes.
    Starts are 10 minutes apart, so 100 000 events span about two years from the day after tomorrow:
    a paid one's last payment time (a day before its start) is a day away, whatever the hour the bench
    runs at (from tomorrow's hour, a registration on `evt-bench-4` was refused PAYMENT_CLOSED whenever
    the bench started past minute 40).
    """
    template = demo_data.DEMO_EVENTS[n % len(demo_data.DEMO_EVENTS)]
    location = Location.values[n % 3]
    price = Price.values[(n // 3) % 2]
    level = Level.values[(n // 6) % 3]
    starts_at = base + timedelta(minutes=10 * n)
    paid = price == Price.PAID
    return Event(
        public_id=f"evt-bench-{n}",
        title=f"{template['title']} #{n}"[:200],
        summary=template["summary"],
        description=template["description"],
        starts_at=starts_at,
        ends_at=starts_at + timedelta(hours=2),
        location=location,
        venue=template.get("venue", ""),
        price=price,
        price_amount=300 + 100 * (n % 5) if paid else None,
        currency="TWD" if paid else "",
        level=level,
        capacity=None if n % 4 == 0 else 30 + n % 70,
        status=EventStatus.PUBLISHED,
    )


def populate(args: argparse.Namespace) -> dict[str, Any]:
    base = (timezone.now() + timedelta(days=2)).replace(minute=0, second=0, microsecond=0)
    sample = [bench_event(n, base=base) for n in range(18)]
    for event in sample:  # one of each combination goes through the model's validation
        event.full_clean()
    for start in range(0, args.events, BATCH):
        Event.objects.bulk_create(
            [bench_event(n, base=base) for n in range(start, min(start + BATCH, args.events))]
        )
    single = Event(
        public_id=SINGLE_EVENT,
        title=f"{SINGLE_WORD}的活動",
        summary="只有一個活動符合這個關鍵字。",
        starts_at=base + timedelta(days=3),
        ends_at=base + timedelta(days=3, hours=2),
        location=Location.ONLINE,
        level=Level.BEGINNER,
        capacity=100,
        status=EventStatus.PUBLISHED,
    )
    single.full_clean()
    single.save()
    Event.objects.bulk_create(
        Event(
            public_id=f"evt-bench-rare-{index}-{n}",
            title=f"{word} 小聚 #{n}",
            summary="每個資料集都一樣多的關鍵字活動。",
            starts_at=base + timedelta(days=2, hours=n),
            ends_at=base + timedelta(days=2, hours=n + 1),
            location=Location.ONLINE,
            level=Level.BEGINNER,
            status=EventStatus.PUBLISHED,
        )
        for index, word in enumerate(PLANTED_WORDS)
        for n in range(RARE_COUNT)
    )
    if args.demo:
        call_command("seed_demo", verbosity=0)
    result: dict[str, Any] = {
        "events": Event.objects.count(),
        "matching_search": Event.objects.published().upcoming().filter(**SEARCH).count(),
    }
    if args.activity:
        started = time.monotonic()
        result["activity"] = activity_rows(args.activity)
        result["activity_s"] = round(time.monotonic() - started, 1)
    if args.eval_runs:
        result["eval_runs"] = eval_runs(args.eval_runs)
    if args.contention_file:
        result["contention"] = contention_setup(args)
    if args.peer_file:
        result["peer"] = peer_setup(args)
    if args.question_pages:
        result["question_pages"] = question_pages()
    call_command("migrate", check=True, verbosity=0)  # self-check: the schema is the project's
    with connection.cursor() as cursor:
        # The steady state autovacuum keeps a live database in: statistics and a visibility map (which
        # lets a count read the index alone). Right after a bulk load neither exists yet.
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    return result


def contention_setup(args: argparse.Namespace) -> dict[str, Any]:
    """`--rush-events` events of `--capacity` seats and `--users` users, each signed in by a session
    created here (no password login). Each rush event asks RUSH_QUESTIONS questions and sells two paid
    ticket types (registration_form): every attempt answers them and names a type, and a registration
    holds its seat waiting for its transfer (`pending_payment`). The attempts' bodies, one per ticket
    type, are in the file."""
    starts_at = timezone.now() + timedelta(days=30)
    rush_ids = [CONTENTION_EVENT, *(f"{CONTENTION_EVENT}-{n}" for n in range(2, args.rush_events + 1))]
    for public_id in rush_ids:
        event = Event(
            public_id=public_id,
            title="Bench: the last seats",
            summary=f"{args.capacity} seats, {args.users} people.",
            starts_at=starts_at,
            ends_at=starts_at + timedelta(hours=2),
            location=Location.TAIPEI,
            level=Level.BEGINNER,
            capacity=args.capacity,
            status=EventStatus.PUBLISHED,
        )
        event.full_clean()
        event.save()
        registration_form.add_questions(event, RUSH_QUESTIONS)
        registration_form.add_ticket_types(event)
    unusable = make_password(None)
    users = User.objects.bulk_create(
        [
            User(username=f"bench-user-{n}", email=f"bench-user-{n}@example.com", password=unusable)
            for n in range(args.users)
        ]
    )
    users = list(User.objects.filter(username__startswith="bench-user-").order_by("pk"))
    keys = []
    for user in users:
        keys.append(signed_in_session(user))
    with open(args.contention_file, "w") as handle:
        json.dump(
            {
                "event": CONTENTION_EVENT,
                "events": rush_ids,
                "capacity": args.capacity,
                "session_cookie": settings.SESSION_COOKIE_NAME,
                "csrf_cookie": settings.CSRF_COOKIE_NAME,
                "sessions": keys,
                "ticket_types": list(registration_form.TICKET_TYPES),
                "bodies": [
                    registration_form.body(RUSH_QUESTIONS, n)
                    for n in range(len(registration_form.TICKET_TYPES))
                ],
            },
            handle,
        )
    return {"event": CONTENTION_EVENT, "capacity": args.capacity, "users": len(keys)}


def question_pages() -> dict[str, str]:
    """The two events of QUESTION_PAGES: the same event, with no question and with 20."""
    starts_at = timezone.now() + timedelta(days=20)
    for count, public_id in QUESTION_PAGES.items():
        event = Event(
            public_id=public_id,
            title="Bench: a workshop that asks questions",
            summary="The same event with and without its registration questions.",
            description=demo_data.DEMO_EVENTS[0]["description"],
            starts_at=starts_at,
            ends_at=starts_at + timedelta(hours=3),
            location=Location.ONLINE,  # not in the bench's search: its figures stay as they were
            level=Level.ADVANCED,
            capacity=100,
            status=EventStatus.PUBLISHED,
        )
        event.full_clean()
        event.save()
        registration_form.add_questions(event, count)
        registration_form.add_ticket_types(event)
    return {str(count): public_id for count, public_id in QUESTION_PAGES.items()}


PEER_EVENT = "evt-bench-peer"
PEER_SCOPES = ["events:read", "registrations:write"]


def peer_setup(args: argparse.Namespace) -> dict[str, Any]:
    """The event the peer comparison and the MCP rows register for (`--peer-capacity` seats, free, the
    same as pretix's quota) and `--peer-users` people, each signed in by a session and holding a
    personal access token (events:read, registrations:write), both made here through their use cases'
    own code (no password login)."""
    from accounts.tokens import create_access_token

    starts_at = timezone.now() + timedelta(days=30)
    event = Event(
        public_id=PEER_EVENT,
        title="Bench: a free event",
        summary="The event both sites register people for.",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(hours=2),
        location=Location.TAIPEI,
        level=Level.BEGINNER,
        capacity=args.peer_capacity,
        status=EventStatus.PUBLISHED,
    )
    event.full_clean()
    event.save()
    unusable = make_password(None)
    User.objects.bulk_create(
        [
            User(username=f"bench-peer-{n}", email=f"bench-peer-{n}@example.com", password=unusable)
            for n in range(args.peer_users)
        ]
    )
    people = []
    for user in User.objects.filter(username__startswith="bench-peer-").order_by("pk"):
        _, token = create_access_token(user=user, name="bench", scopes=PEER_SCOPES, days=30)
        people.append([signed_in_session(user), token])
    with open(args.peer_file, "w") as handle:
        json.dump(
            {
                "event": PEER_EVENT,
                "capacity": args.peer_capacity,
                "session_cookie": settings.SESSION_COOKIE_NAME,
                "csrf_cookie": settings.CSRF_COOKIE_NAME,
                "people": people,
            },
            handle,
        )
    return {"event": PEER_EVENT, "capacity": args.peer_capacity, "users": len(people)}


def contention_check(args: argparse.Namespace) -> dict[str, Any]:
    """What the database says after the rushes, per event: confirmed seats, the seat counter and every
    recorded outcome."""
    return {"events": [_rush_stored(public_id) for public_id in args.event]}


def _rush_stored(public_id: str) -> dict[str, Any]:
    event = Event.objects.with_seats().get(public_id=public_id)
    registrations = Registration.objects.filter(event=event)
    outcomes = Activity.objects.filter(action="register_event", event=event).values_list("outcome", flat=True)
    counted: dict[str, int] = {}
    for outcome in outcomes:
        counted[outcome] = counted.get(outcome, 0) + 1
    holding = registrations.filter(status__in=HOLDING_SEAT)
    answered = sum(
        1
        for answers, ticket_type in holding.values_list("answers", "ticket_type")
        if len(answers) == RUSH_QUESTIONS and ticket_type in registration_form.TICKET_TYPES
    )
    return {
        "event": public_id,
        "capacity": event.capacity,
        "confirmed": registrations.filter(status=RegistrationStatus.CONFIRMED).count(),
        "holding": holding.count(),
        "pending_payment": registrations.filter(status=RegistrationStatus.PENDING_PAYMENT).count(),
        "answered": answered,
        "paid_types": sorted(entry["identifier"] for entry in event.ticket_form if entry["price"] > 0),
        "seats_taken": event.seats_taken,
        "seats_counted": event.confirmed_count + event.held_count,
        "rows": registrations.count(),
        "distinct_users": registrations.values("user").distinct().count(),
        "activity_outcomes": counted,
    }


# ---- queries -----------------------------------------------------------------------------------


TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


def split(queries: CaptureQueriesContext) -> tuple[int, int]:
    """(queries, transaction-control statements): BEGIN/COMMIT/SAVEPOINT are counted apart."""
    control = sum(1 for query in queries.captured_queries if query["sql"].startswith(TRANSACTION_CONTROL))
    return len(queries) - control, control


def captured(client: Client, method: str, url: str, expect: tuple[int, ...]) -> tuple[int, int]:
    """SQL statements one request runs, from the session lookup to the Activity row."""
    call = getattr(client, method)
    with CaptureQueriesContext(connection) as queries:
        response = call(url) if method == "get" else call(url, data="", content_type="application/json")
    if response.status_code not in expect:
        raise AssertionError(
            f"{method.upper()} {url} answered {response.status_code}: {response.content[:300]!r}"
        )
    return split(queries)


def manifest_queries(*, user, url: str, state: dict[str, Any]) -> tuple[int, int]:
    """Render `{% webmcp_tools %}` alone for `url`'s route, as a page does."""
    from django.contrib.auth.models import AnonymousUser
    from django.template import engines
    from django.test import RequestFactory
    from django.urls import resolve

    request = RequestFactory().get(url)
    request.resolver_match = resolve(url)
    request.user = user or AnonymousUser()
    template = engines["django"].from_string("{% load webmcp %}{% webmcp_tools %}")
    with CaptureQueriesContext(connection) as queries:
        html = template.render({"webmcp_state": state}, request)
    if "webmcp-manifest" not in html:
        raise AssertionError(f"no manifest rendered for {url}")
    return split(queries)


def events_with_registrations(tag: str, registrations: int, others: list) -> Event:
    """A fresh upcoming event (100 seats) with `registrations` confirmed seats taken by `others`."""
    starts_at = timezone.now() + timedelta(days=20)
    event = Event.objects.create(
        public_id=f"evt-bench-q-{tag}",
        title=f"Query count {tag}",
        summary="An event whose seats are partly taken.",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(hours=1),
        location=Location.TAIPEI,
        level=Level.BEGINNER,
        capacity=100,
        status=EventStatus.PUBLISHED,
    )
    Registration.objects.bulk_create(
        [Registration(user=user, event=event) for user in others[:registrations]]
    )
    recount_seats(Event.objects.filter(pk=event.pk))  # a bulk load: the seat counter as the site keeps it
    return event


def queries(args: argparse.Namespace) -> dict[str, Any]:
    """Statements per request, for few and for many rows, by three kinds of visitor.

    N is what a naive implementation would loop over: results on the page (1 vs 50), the visitor's
    saves and registrations (1 vs 20), the seats taken on the event (1 vs 40). A count that does not
    change with N means no query per row. Visitors: no cookie at all; an anonymous visitor whose
    session holds saves; a signed-in account. Each request is counted as when its process holds no
    kept catalogue revision (`CATALOGUE_REVISION_SECONDS=0`), the most it ever makes.
    """
    with override_settings(CATALOGUE_REVISION_SECONDS=0):
        return _queries()


def _queries() -> dict[str, Any]:
    others = list(
        User.objects.bulk_create(
            [User(username=f"bench-q-other-{n}", password=make_password(None)) for n in range(40)]
        )
    )
    others = list(User.objects.filter(username__startswith="bench-q-other-").order_by("pk"))
    pool = list(Event.objects.filter(public_id__startswith="evt-bench-", capacity__isnull=True)[:25])
    sizes = {"few": 1, "many": 20}
    searches = {
        "few": f"query={SINGLE_WORD}",
        "many": "&".join(f"{key}={value}" for key, value in SEARCH.items()),
    }
    rows: dict[str, dict[str, int]] = {}
    control: dict[str, dict[str, int]] = {}

    def record(name: str, column: str, value: tuple[int, int]) -> None:
        rows.setdefault(name, {})[column], control.setdefault(name, {})[column] = value

    for size, count in sizes.items():
        user = User.objects.create(username=f"bench-q-{size}", email=f"bench-q-{size}@example.com")
        for event in pool[:count]:
            SavedEvent.objects.create(user=user, event=event)
            Registration.objects.create(user=user, event=event)
        target = events_with_registrations(size, 1 if size == "few" else 40, others)
        visitors = {"no cookie": Client(), "session": Client(), "signed-in": Client()}
        visitors["signed-in"].force_login(user)
        for event in pool[:count]:  # an anonymous visitor with a session token and `count` saves
            captured(visitors["session"], "put", f"/api/me/saved/{event.public_id}", (201,))
        search = searches[size]
        detail = f"/events/{target.public_id}/"
        api_detail = f"/api/events/{target.public_id}"
        reads = [
            ("list page", f"/events/?{search}"),
            ("detail page", detail),
            ("my events page", "/me/"),
            ("API search_events", f"/api/events?{search}&limit=50"),
            ("API get_event_details", api_detail),
            ("API list_saved", "/api/me/saved"),
        ]
        for name, url in reads:
            for kind, client in visitors.items():
                record(name, f"{kind} {size}", captured(client, "get", url, (200,)))
        record(
            "API list_registrations",
            f"signed-in {size}",
            captured(visitors["signed-in"], "get", "/api/me/registrations", (200,)),
        )
        saved_url = f"/api/me/saved/{target.public_id}"
        registration_url = f"{api_detail}/registration"
        writes = [
            ("API save_event", "put", saved_url, (201,), ("session", "signed-in")),
            ("API unsave_event", "delete", saved_url, (200,), ("session", "signed-in")),
            ("API register_event", "post", registration_url, (201,), ("signed-in",)),
            ("API cancel_registration", "delete", registration_url, (200,), ("signed-in",)),
        ]
        for name, method, url, expect, kinds in writes:
            for kind in kinds:
                record(name, f"{kind} {size}", captured(visitors[kind], method, url, expect))
        for route, url in (("list", "/events/"), ("detail", detail)):
            for kind, visitor in (("no cookie", None), ("signed-in", user)):
                state = {"signed_in": visitor is not None, "stateVersion": 3, "registration_open": True}
                record(
                    f"manifest render ({route})",
                    f"{kind} {size}",
                    manifest_queries(user=visitor, url=url, state=state),
                )
    return {
        "vendor": connection.vendor,
        "events": Event.objects.count(),
        "rows": rows,
        "transaction_control": control,
    }


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
MCP_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def mcp_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC body of one `tools/call` (the bench's load sends the same bytes)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _mcp(client: Client, body: dict[str, Any]) -> tuple[tuple[int, int], dict[str, Any]]:
    """Statements of one POST /mcp, and its JSON-RPC result (checked: no protocol error)."""
    with CaptureQueriesContext(connection) as queries:
        response = client.post("/mcp", data=json.dumps(body), content_type="application/json")
    answer = json.loads(response.content) if response.status_code == 200 else {}
    if "result" not in answer:
        raise AssertionError(
            f"/mcp {body['method']} answered {response.status_code}: {response.content[:300]!r}"
        )
    return split(queries), answer["result"]


def peer_queries(args: argparse.Namespace) -> dict[str, Any]:
    """Statements per operation of the peer comparison and of MCP, for few and for many rows: a search
    of 1 vs 10 results, a person with 0 vs 20 registrations. Each request as `queries` counts it."""
    with override_settings(CATALOGUE_REVISION_SECONDS=0):
        return _peer_queries()


def _peer_queries() -> dict[str, Any]:
    from accounts.tokens import create_access_token

    pool = list(Event.objects.filter(public_id__startswith="evt-bench-", capacity__isnull=True)[:20])
    rows: dict[str, dict[str, int]] = {}
    searches = {"few": {"query": SINGLE_WORD}, "many": SEARCH}
    event = PEER_EVENT
    page = f"/events/{event}/"
    for size in ("few", "many"):
        people = {}
        for kind in ("rest", "browser", "mcp"):
            user = User.objects.create(
                username=f"bench-pq-{kind}-{size}", email=f"pq-{kind}-{size}@example.com"
            )
            for other in pool[: 20 if size == "many" else 0]:
                Registration.objects.create(user=user, event=other)
            people[kind] = user
        anonymous = Client()
        captured(anonymous, "get", page, (200,))  # warm: templates, the kept regions
        query = "&".join(f"{key}={value}" for key, value in searches[size].items())
        rows.setdefault("event page", {})[size] = captured(anonymous, "get", page, (200,))[0]
        rows.setdefault("/events/ page", {})[size] = captured(anonymous, "get", f"/events/?{query}", (200,))[
            0
        ]
        rows.setdefault("API search", {})[size] = captured(anonymous, "get", f"/api/events?{query}", (200,))[
            0
        ]
        token = create_access_token(user=people["rest"], name="bench", scopes=PEER_SCOPES, days=1)[1]
        rest = Client(headers={"Authorization": f"Bearer {token}"})
        rows.setdefault("REST registration (bearer token)", {})[size] = captured(
            rest, "post", f"/api/events/{event}/registration", (201,)
        )[0]
        browser = Client()
        browser.force_login(people["browser"])
        steps = [captured(browser, "get", page, (200,))[0]]
        with CaptureQueriesContext(connection) as posted:
            response = browser.post(f"/events/{event}/register/")
        if response.status_code not in (302, 303):
            raise AssertionError(f"the register form answered {response.status_code}")
        steps.append(split(posted)[0])
        steps.append(captured(browser, "get", response["Location"], (200,))[0])
        rows.setdefault("browser registration (3 requests)", {})[size] = sum(steps)
        token = create_access_token(user=people["mcp"], name="bench", scopes=PEER_SCOPES, days=1)[1]
        agent = Client(headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
        plain = Client(headers=MCP_HEADERS)
        _mcp(plain, MCP_INITIALIZE)  # warm: the SDK's server, the schemas
        rows.setdefault("MCP initialize", {})[size] = _mcp(plain, MCP_INITIALIZE)[0][0]
        rows.setdefault("MCP tools/list", {})[size] = _mcp(plain, MCP_LIST)[0][0]
        (counted, result) = _mcp(plain, mcp_call("search_events", searches[size]))
        if result.get("isError"):
            raise AssertionError(f"search_events over MCP refused: {result}")
        rows.setdefault("MCP search_events", {})[size] = counted[0]
        rows.setdefault("MCP search_events, signed in", {})[size] = _mcp(
            agent, mcp_call("search_events", searches[size])
        )[0][0]
        (asked, preview) = _mcp(agent, mcp_call("register_event", {"event_id": event}))
        confirmation = preview["structuredContent"].get("confirmation")
        if not confirmation:
            raise AssertionError(f"register_event over MCP gave no confirmation: {preview}")
        (done, result) = _mcp(
            agent, mcp_call("register_event", {"event_id": event, "confirmation": confirmation})
        )
        if result.get("isError") or not result["structuredContent"].get("ok"):
            raise AssertionError(f"register_event over MCP refused: {result}")
        rows.setdefault("MCP register_event (preview + confirmed)", {})[size] = asked[0] + done[0]
    return {"rows": rows, "constant": {name: len(set(counts.values())) == 1 for name, counts in rows.items()}}


#: The numbers of questions the registration write is measured with (its statements must not grow).
QUESTION_COUNTS = (0, 3, 20)


def question_queries(args: argparse.Namespace) -> dict[str, Any]:
    """SQL statements of one registration write through the REST route the rush uses (`POST
    /api/events/<id>/registration`, a signed-in person's session), with the answers to 0, 3 and 20
    questions and a paid ticket type (registration_form), each on an event of its own and by a person
    of their own, after a warm-up registration. The statements of the last one are kept (the
    profile of a figure above its target)."""
    starts_at = timezone.now() + timedelta(days=25)

    def event_asking(count: int, name: str) -> Event:
        event = Event(
            public_id=f"evt-bench-write-{name}",
            title=f"Bench: a write with {count} answers",
            summary="Statements per registration write.",
            starts_at=starts_at,
            ends_at=starts_at + timedelta(hours=2),
            location=Location.ONLINE,
            level=Level.ADVANCED,
            capacity=100,
            status=EventStatus.PUBLISHED,
        )
        event.full_clean()
        event.save()
        registration_form.add_questions(event, count)
        registration_form.add_ticket_types(event)
        return event

    def write(count: int, name: str) -> tuple[tuple[int, int], list[str], int]:
        event = event_asking(count, name)
        client = Client()
        client.force_login(User.objects.create(username=f"bench-w-{name}", email=f"w-{name}@example.com"))
        body = json.dumps(registration_form.body(count, 0))
        with CaptureQueriesContext(connection) as queries:
            response = client.post(
                f"/api/events/{event.public_id}/registration", data=body, content_type="application/json"
            )
        if response.status_code != 201:
            raise AssertionError(
                f"the registration answered {response.status_code}: {response.content[:300]!r}"
            )
        status = Registration.objects.get(event=event).status
        if status != RegistrationStatus.PENDING_PAYMENT:
            raise AssertionError(f"a paid registration is {status}, not pending_payment")
        sql = [query["sql"][:200] for query in queries.captured_queries]
        return split(queries), sql, len(Registration.objects.get(event=event).answers)

    write(3, "warm")  # templates, the content types, the connection
    counts, control, statements, stored = {}, {}, {}, {}
    for count in QUESTION_COUNTS:
        (counts[count], control[count]), statements[count], stored[count] = write(count, str(count))
    return {
        "vendor": connection.vendor,
        "counts": {str(count): value for count, value in counts.items()},
        "transaction_control": {str(count): value for count, value in control.items()},
        "answers_stored": {str(count): value for count, value in stored.items()},
        "constant": len(set(counts.values())) == 1,
        "statements": statements[QUESTION_COUNTS[-1]],
    }


def payments(args: argparse.Namespace) -> dict[str, Any]:
    """The payment rows of bench/payment_runs.py (the registration write, the sweep, the bank import,
    the model runs' tokens) on this database, which nothing else uses."""
    from bench import payment_runs

    return payment_runs.run(
        registrations=args.registrations,
        events=args.events,
        bank_small=args.bank_small,
        bank_large=args.bank_large,
        writes=args.writes,
    )


def waitlist_race(args: argparse.Namespace) -> dict[str, Any]:
    """The waiting-list race of bench/waitlist_race.py (the same scenario as its PostgreSQL test)."""
    from bench import waitlist_race as race

    return race.run(capacity=50, waiting=100, cancellations=30, outsiders=20)


# ---- the payment sweep's fault run --------------------------------------------------------------

SWEEP_PREFIX = "evt-sweep-"


def overdue_payments(args: argparse.Namespace) -> dict[str, Any]:
    """What `bench.faults --faults payment-sweep` kills the sweep in the middle of: `--events` paid
    events of `--seats` seats, each seat held by a registration waiting for its bank transfer, and
    `--seats` + 1 people on each waiting list. Registrations and waiting lists go through their action
    rows, as people make them; then their deadline is moved into the past (the clock, not a row)."""
    per_event = 2 * args.seats + 1
    User.objects.bulk_create(
        User(username=f"sweep-user-{n}", email=f"sweep-user-{n}@example.com", password="!")
        for n in range(args.events * per_event)
    )
    people = iter(Visitor(user=user) for user in User.objects.filter(username__startswith="sweep-user-"))
    starts_at = (timezone.now() + timedelta(days=20)).replace(minute=0, second=0, microsecond=0)
    for n in range(args.events):
        event = Event.objects.create(
            public_id=f"{SWEEP_PREFIX}{n}",
            title=f"Payment sweep #{n}",
            summary="A paid event whose held seats were never paid for.",
            starts_at=starts_at + timedelta(hours=n),
            ends_at=starts_at + timedelta(hours=n + 2),
            location=Location.TAIPEI,
            level=Level.BEGINNER,
            price=Price.PAID,
            price_amount=600,
            currency="TWD",
            capacity=args.seats,
            status=EventStatus.PUBLISHED,
        )
        TicketType.objects.create(
            event=event, identifier="regular", name_en="Regular", name_zh_hant="一般", price=600
        )
        for _ in range(args.seats):
            actions.call("register_event", visitor=next(people), channel="api", event_id=event.public_id)
        for _ in range(args.seats + 1):
            actions.call("join_waitlist", visitor=next(people), channel="api", event_id=event.public_id)
    ours = Registration.objects.filter(event__public_id__startswith=SWEEP_PREFIX)
    overdue = ours.filter(status=RegistrationStatus.PENDING_PAYMENT).update(
        payment_due_at=timezone.now() - timedelta(hours=1)
    )
    waiting = WaitlistEntry.objects.filter(event__public_id__startswith=SWEEP_PREFIX).count()
    return {"events": args.events, "overdue": overdue, "waiting": waiting}


# ---- the agent-readiness dashboard -------------------------------------------------------------

DASHBOARD_URL = "/admin/agent-readiness/"
DASHBOARD_TOKEN = "bench-dashboard"  # the visitor token of every Activity row made here
DASHBOARD_DAYS = 60
#: Share of the calls per mode, in percent (they add up to 100).
MODE_SHARES = (("ui", 50), ("agent", 25), ("api", 12), ("mcp", 10), ("admin", 3))
ACTIONS = (
    "search_events",
    "get_event_details",
    "save_event",
    "register_event",
    "join_waitlist",
    "list_saved",
)
REFUSALS = (
    ("register_event", "EVENT_FULL"),
    ("register_event", "SIGN_IN_REQUIRED"),
    ("join_waitlist", "SEATS_AVAILABLE"),
    ("search_events", "VALIDATION_ERROR"),
    ("save_event", "INSUFFICIENT_SCOPE"),
    ("register_event", "REGISTRATION_CLOSED"),
)
REFUSED_PERCENT = 8


def _case(expression: str, values: list[tuple[str, str]]) -> str:
    """`CASE <expression> WHEN … THEN '…' END` over our own constants (no input reaches it)."""
    whens = " ".join(f"WHEN {when} THEN '{then}'" for when, then in values)
    return f"CASE {expression} {whens} END"


def activity_rows(count: int) -> int:
    """`count` Activity rows spread evenly over the last DASHBOARD_DAYS days, in one INSERT … SELECT,
    then counted into the day counts the dashboard reads (`recount`, as after any bulk load).

    Row i's mode, action and outcome come from multiplicative hashes of i (deterministic, well mixed):
    modes in MODE_SHARES proportions, REFUSED_PERCENT % refused with one of REFUSALS, the rest `OK`.
    PostgreSQL generates the rows with generate_series; SQLite with a recursive CTE.
    """
    table = Activity._meta.db_table
    step = DASHBOARD_DAYS * 86400 / count  # seconds between rows, newest first
    bounds, total = [], 0
    for mode, share in MODE_SHARES:
        total += share
        bounds.append((f"{total}", mode))
    mode = "CASE " + " ".join(f"WHEN r < {bound} THEN '{m}'" for bound, m in bounds) + " END"
    refused = f"(i * 104729) %% 100 < {REFUSED_PERCENT}"
    pick = f"(i * 13) %% {len(REFUSALS)}"
    action = (
        f"CASE WHEN {refused} THEN "
        + _case(pick, [(str(n), tool) for n, (tool, _) in enumerate(REFUSALS)])
        + " ELSE "
        + _case(f"(i * 31) %% {len(ACTIONS)}", [(str(n), name) for n, name in enumerate(ACTIONS)])
        + " END"
    )
    outcome = (
        f"CASE WHEN {refused} THEN "
        + _case(pick, [(str(n), reason) for n, (_, reason) in enumerate(REFUSALS)])
        + " ELSE 'OK' END"
    )
    now = timezone.now()
    columns = "action, mode, outcome, visitor_token, client, created_at"  # no connected agent
    # `%` is the modulo operator here: doubled, as the driver's placeholders are `%s`.
    select = f"SELECT {action}, {mode}, {outcome}, '{DASHBOARD_TOKEN}', '', {{created}} FROM {{rows}}"
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            created = "%s - (i * %s) * interval '1 second'"
            rows = (
                f"(SELECT i, (i * 7919) %% 100 AS r FROM generate_series(0::bigint, {count - 1}) AS i) AS s"
            )
            cursor.execute(
                f"INSERT INTO {table} ({columns}) " + select.format(created=created, rows=rows), [now, step]
            )
        else:
            created = "datetime(%s, '-' || CAST(i * %s AS INTEGER) || ' seconds')"
            rows = (
                f"(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {count - 1}) "
                "SELECT i, (i * 7919) %% 100 AS r FROM n)"
            )
            cursor.execute(
                f"INSERT INTO {table} ({columns}) " + select.format(created=created, rows=rows),
                [now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"), step],
            )
    recount()
    return Activity.objects.filter(visitor_token=DASHBOARD_TOKEN).count()


def eval_runs(count: int) -> dict[str, int]:
    """`count` eval runs through the import the dashboard reads (readiness.reports): the bank's 41 case
    names, the two paths, over count // 2 revisions — this server's among them, and two earlier ones
    with a few failures (regressions to list)."""
    from core.revision import revision
    from readiness.reports import import_report

    categories = {"SEL": 4, "ARG": 12, "ORD": 3, "NAV": 2, "RECOVERY": 2, "WRITE": 10, "AUTH": 2, "NO": 6}
    names = [(f"{category}-{n:02d}", category) for category, k in categories.items() for n in range(1, k + 1)]
    here = revision()
    revisions = [here, *(f"bench-rev-{n}" for n in range(1, max(1, count // 2)))]
    base = datetime.now(UTC) - timedelta(days=1)
    made = 0
    for age, rev in enumerate(revisions):
        for via in ("webmcp", "mcp"):
            if made == count:
                break
            failing = {names[(age * 7 + k) % len(names)][0] for k in range(age % 3)}
            stamp = (base - timedelta(hours=6 * age)).strftime("%Y-%m-%dT%H:%M:%SZ")
            health = {"revision": rev, "toolCatalogueFingerprint": "sha256:bench"}
            report = {
                "kind": "agentready-evals-report",
                "formatVersion": 1,
                "mode": "smoke",
                "via": via,
                "startedAt": stamp,
                "finishedAt": stamp,
                "health": {"start": health, "end": health},
                "totals": {},
                "cases": [
                    {
                        "name": name,
                        "category": category,
                        "case": {"meta": {"route": "/events/"}},
                        "outcome": "fail" if name in failing else "pass",
                        "reasons": ["bench: made-up failure"] if name in failing else [],
                    }
                    for name, category in names
                ],
            }
            import_report(json.dumps(report).encode(), source="bench")
            made += 1
    from readiness.models import EvalResult, EvalRun

    return {
        "runs": EvalRun.objects.count(),
        "results": EvalResult.objects.count(),
        "revisions": len(revisions),
    }


EXECUTION_TIME = re.compile(r"Execution Time: ([0-9.]+) ms")


def explain(sql: str) -> dict[str, Any]:
    """The plan of one of the page's statements: EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL, EXPLAIN QUERY
    PLAN on SQLite (no timing there)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            found = EXECUTION_TIME.search(plan)
            return {"plan": plan, "execution_ms": float(found.group(1)) if found else None}
        cursor.execute("EXPLAIN QUERY PLAN " + sql)
        return {"plan": "\n".join(str(row[-1]) for row in cursor.fetchall()), "execution_ms": None}


def dashboard(args: argparse.Namespace) -> dict[str, Any]:
    """The agent-readiness page for a signed-in staff member, in-process (Django's test Client, the
    whole middleware stack): its SQL statements once, then `--requests` timed requests; the plans of
    its Activity statements; and a self-check that the page's usage numbers add up to the rows."""
    from readiness import figures as readiness_figures
    from readiness.models import EvalRun

    staff = User.objects.create_user("bench-staff", "bench-staff@example.com", None)
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client = Client(headers={"Accept-Language": "en"})
    client.force_login(staff)
    for _ in range(2):  # warm: templates compiled, the connection open, the registry loaded
        response = client.get(DASHBOARD_URL)
        if response.status_code != 200:
            raise AssertionError(f"GET {DASHBOARD_URL} answered {response.status_code}")
    with CaptureQueriesContext(connection) as captured:
        response = client.get(DASHBOARD_URL)
    html = response.content.decode()
    statements, control = split(captured)
    page_queries = list(captured.captured_queries)  # the next request's request_started empties the log
    per_query = [
        {"sql": query["sql"][:160], "ms": round(float(query["time"]) * 1000, 1)}
        for query in page_queries
        if not query["sql"].startswith(TRANSACTION_CONTROL)
    ]
    timings = []
    for _ in range(args.requests):
        started = time.perf_counter()
        client.get(DASHBOARD_URL)
        timings.append((time.perf_counter() - started) * 1000)
    table = ActivityCount._meta.db_table
    plans = [
        {"sql": query["sql"], **explain(query["sql"])}
        for query in page_queries
        if f'"{table}"' in query["sql"]
    ]
    usage = readiness_figures.usage()
    since = timezone.make_aware(
        datetime.combine(usage.days[0], datetime.min.time()), timezone.get_default_timezone()
    )
    shown = sum(sum(counts) for counts in usage.by_mode.values())
    return {
        "vendor": connection.vendor,
        "activity": Activity.objects.count(),
        "activity_shown": shown,
        "activity_in_window": Activity.objects.filter(created_at__gte=since).count(),
        "eval_runs": EvalRun.objects.count(),
        "status": response.status_code,
        "sections": all(
            f'id="{ident}"' in html for ident in ("tools-heading", "evals-heading", "usage-heading")
        ),
        "refusal_rows": len(usage.refusals),
        "queries": statements,
        "transaction_control": control,
        "per_query": per_query,
        "requests": args.requests,
        "median_ms": round(statistics.median(timings), 1),
        "p90_ms": round(sorted(timings)[max(0, int(len(timings) * 0.9) - 1)], 1),
        "min_ms": round(min(timings), 1),
        "bytes": len(response.content),
        "plans": plans,
    }


COMMANDS = {
    "populate": populate,
    "queries": queries,
    "contention-check": contention_check,
    "peer-queries": peer_queries,
    "waitlist-race": waitlist_race,
    "question-queries": question_queries,
    "payments": payments,
    "dashboard": dashboard,
    "overdue-payments": overdue_payments,
}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tasks")
    commands = parser.add_subparsers(dest="command", required=True)
    fill = commands.add_parser("populate")
    fill.add_argument("--events", type=int, required=True)
    fill.add_argument("--demo", action="store_true", help="also load the demo catalogue (seed_demo)")
    fill.add_argument(
        "--contention-file", default="", help="set up the contention bench; write sessions here"
    )
    fill.add_argument("--users", type=int, default=500)
    fill.add_argument("--capacity", type=int, default=50)
    fill.add_argument("--rush-events", type=int, default=1, help="events of --capacity seats for the rush")
    fill.add_argument("--peer-file", default="", help="set up the peer and MCP rows; write people here")
    fill.add_argument("--peer-users", type=int, default=1000)
    fill.add_argument("--peer-capacity", type=int, default=1000)
    fill.add_argument("--question-pages", action="store_true", help="the events of QUESTION_PAGES")
    fill.add_argument("--activity", type=int, default=0, help="Activity rows over the last 60 days")
    fill.add_argument("--eval-runs", type=int, default=0, help="eval runs (smoke, both paths)")
    sweep = commands.add_parser("overdue-payments")
    sweep.add_argument("--events", type=int, required=True)
    sweep.add_argument("--seats", type=int, required=True)
    commands.add_parser("queries")
    commands.add_parser("waitlist-race")
    commands.add_parser("question-queries")
    paying = commands.add_parser("payments")
    paying.add_argument("--registrations", type=int, default=10_000, help="overdue, for the sweep")
    paying.add_argument("--events", type=int, default=100, help="full events with waiting lists")
    paying.add_argument("--bank-small", type=int, default=1_000, help="rows of the small statement")
    paying.add_argument("--bank-large", type=int, default=10_000, help="rows of the large statement")
    paying.add_argument("--writes", type=int, default=100, help="registration writes timed")
    commands.add_parser("peer-queries")
    page = commands.add_parser("dashboard")
    page.add_argument("--requests", type=int, default=20)
    check = commands.add_parser("contention-check")
    check.add_argument("--event", nargs="+", default=[CONTENTION_EVENT])
    args = parser.parse_args(argv)
    result = COMMANDS[args.command](args)
    sys.stdout.write("\n" + json.dumps(result, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
