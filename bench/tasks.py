"""The Django side of the bench, run by `run.py` in a child process against one bench database.

    python -m bench.tasks populate --events 10000 --demo --contention-file FILE
    python -m bench.tasks queries
    python -m bench.tasks contention-check --event evt-bench-contention
    python -m bench.tasks waitlist-race

The database is the one in DATABASE_URL (run.py points it at a bench database, never the project's).
Each command prints one JSON object on its last line of output; run.py reads that line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import timedelta
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model  # noqa: E402
from django.contrib.auth.hashers import make_password  # noqa: E402
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

from events import demo_data  # noqa: E402
from events.choices import EventStatus, Level, Location, Price, RegistrationStatus  # noqa: E402
from events.models import Activity, Event, Registration, SavedEvent  # noqa: E402

User = get_user_model()

#: The search every latency figure uses: the demo's first scenario, "free beginner events in Taipei".
SEARCH = {"location": "taipei", "price": "free", "level": "beginner"}
CONTENTION_EVENT = "evt-bench-contention"
SINGLE_EVENT = "evt-bench-single"
SINGLE_WORD = "獨一無二"  # in the title of SINGLE_EVENT only: a search that finds exactly one event
BATCH = 2000


# ---- data --------------------------------------------------------------------------------------


def bench_event(n: int, *, base) -> Event:
    """The n-th bench event: published, upcoming, every location × price × level (period 18).

    Titles and summaries are the demo catalogue's, so pages and payloads have realistic sizes.
    Starts are 10 minutes apart, so 100 000 events span about two years from tomorrow.
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
    base = (timezone.now() + timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
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
    if args.demo:
        call_command("seed_demo", verbosity=0)
    result: dict[str, Any] = {
        "events": Event.objects.count(),
        "matching_search": Event.objects.published().upcoming().filter(**SEARCH).count(),
    }
    if args.contention_file:
        result["contention"] = contention_setup(args)
    call_command("migrate", check=True, verbosity=0)  # self-check: the schema is the project's
    with connection.cursor() as cursor:
        # The steady state autovacuum keeps a live database in: statistics and a visibility map (which
        # lets a count read the index alone). Right after a bulk load neither exists yet.
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    return result


def contention_setup(args: argparse.Namespace) -> dict[str, Any]:
    """A 50-seat event and 500 users, each signed in by a session created here (no password login)."""
    starts_at = timezone.now() + timedelta(days=30)
    event = Event(
        public_id=CONTENTION_EVENT,
        title="Bench: the last seats",
        summary="Fifty seats, five hundred people.",
        starts_at=starts_at,
        ends_at=starts_at + timedelta(hours=2),
        location=Location.TAIPEI,
        level=Level.BEGINNER,
        capacity=args.capacity,
        status=EventStatus.PUBLISHED,
    )
    event.full_clean()
    event.save()
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
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        keys.append(session.session_key)
    with open(args.contention_file, "w") as handle:
        json.dump(
            {
                "event": CONTENTION_EVENT,
                "capacity": args.capacity,
                "session_cookie": settings.SESSION_COOKIE_NAME,
                "csrf_cookie": settings.CSRF_COOKIE_NAME,
                "sessions": keys,
            },
            handle,
        )
    return {"event": CONTENTION_EVENT, "capacity": args.capacity, "users": len(keys)}


def contention_check(args: argparse.Namespace) -> dict[str, Any]:
    """What the database says after the rush: confirmed seats and every recorded outcome."""
    event = Event.objects.get(public_id=args.event)
    registrations = Registration.objects.filter(event=event)
    outcomes = Activity.objects.filter(action="register_event", event=event).values_list("outcome", flat=True)
    counted: dict[str, int] = {}
    for outcome in outcomes:
        counted[outcome] = counted.get(outcome, 0) + 1
    return {
        "capacity": event.capacity,
        "confirmed": registrations.filter(status=RegistrationStatus.CONFIRMED).count(),
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
    return event


def queries(args: argparse.Namespace) -> dict[str, Any]:
    """Statements per request, for few and for many rows, by three kinds of visitor.

    N is what a naive implementation would loop over: results on the page (1 vs 50), the visitor's
    saves and registrations (1 vs 20), the seats taken on the event (1 vs 40). A count that does not
    change with N means no query per row. Visitors: no cookie at all; an anonymous visitor whose
    session holds saves; a signed-in account.
    """
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


def waitlist_race(args: argparse.Namespace) -> dict[str, Any]:
    """The waiting-list race of bench/waitlist_race.py (the same scenario as its PostgreSQL test)."""
    from bench import waitlist_race as race

    return race.run(capacity=50, waiting=100, cancellations=30, outsiders=20)


COMMANDS = {
    "populate": populate,
    "queries": queries,
    "contention-check": contention_check,
    "waitlist-race": waitlist_race,
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
    commands.add_parser("queries")
    commands.add_parser("waitlist-race")
    check = commands.add_parser("contention-check")
    check.add_argument("--event", default=CONTENTION_EVENT)
    args = parser.parse_args(argv)
    result = COMMANDS[args.command](args)
    sys.stdout.write("\n" + json.dumps(result, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
