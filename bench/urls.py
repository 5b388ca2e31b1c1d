"""The site's URLs plus the bench's two ceilings for the search API: a bare view and a floor view.

Both are plain Django views behind the same middleware, on the same server.

- The bare view reads nothing from the database and returns, unchanged, a JSON body captured from
  the API before the load starts (its path is in BENCH_BARE_BODY): the framework's ceiling.
- The floor view does the work the answer needs and nothing else: the search endpoint's SQL (the
  same statement with the same conditions, prepared on PostgreSQL as the API's is) through a raw
  cursor, rows turned
  into the same JSON bytes with orjson, which the API's renderer also uses. It is the fair ceiling:
  what a hand-written view could reach. The bench checks before the load that it answers the API's
  bytes exactly.
"""

import functools
import os
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.utils import timezone

from config import urls as site_urls
from core.statements import server_binding

FILTERS = ("location", "price", "level")
# The statement the API search sends for a first page without a keyword (tests/bench/test_floor.py
# compares them): the page, with the total as a subquery run once and the three parts of its ETag's
# revision (selectors.search_revision), which the floor reads and leaves unused.
WHERE = '("{table}"."status" = %s AND "{table}"."starts_at" > %s{filters})'
PAGE_SQL = (
    'SELECT "events_event"."public_id" AS "public_id", "events_event"."title" AS "title", '
    '"events_event"."summary" AS "summary", "events_event"."starts_at" AS "starts_at", '
    '"events_event"."location" AS "location", "events_event"."price" AS "price", '
    '"events_event"."level" AS "level", '
    '(SELECT COUNT(*) AS "n" FROM "events_event" "U0" WHERE {inner}) AS "total_matching", '
    '(SELECT MAX("U0"."updated_at") AS "newest" FROM "events_event" "U0") AS "revision_changed", '
    '(SELECT MAX("U0"."starts_at") AS "newest" FROM "events_event" "U0" WHERE "U0"."starts_at" <= %s) '
    'AS "revision_started", '
    '(SELECT MAX("U0"."retired_at") AS "newest" FROM "events_retiredeventid" "U0") AS "revision_retired" '
    'FROM "events_event" WHERE {outer} ORDER BY 4 ASC, "events_event"."id" ASC LIMIT 10'
)


@functools.cache
def bare_body() -> bytes:
    return Path(os.environ["BENCH_BARE_BODY"]).read_bytes()


def bare(request: HttpRequest) -> HttpResponse:
    return HttpResponse(bare_body(), content_type="application/json")


def aware(moment: datetime) -> datetime:
    """PostgreSQL's rows hold aware datetimes; SQLite's (the fallback) naive UTC ones."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def floor(request: HttpRequest) -> HttpResponse:
    """`GET /bench/floor?location=…&price=…&level=…`: the search answer with no framework in the way."""
    applied = {name: request.GET[name] for name in sorted(FILTERS) if request.GET.get(name)}
    now = timezone.now()
    conditions = ["published", now, *applied.values()]

    def where(table: str) -> str:
        return WHERE.format(table=table, filters="".join(f' AND "{table}"."{name}" = %s' for name in applied))

    zone = ZoneInfo(settings.TIME_ZONE)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":  # sent as the API sends its compiled statement: prepared
            server_binding(cursor)
        cursor.execute(
            PAGE_SQL.format(inner=where("U0"), outer=where("events_event")), [*conditions, now, *conditions]
        )
        rows = cursor.fetchall()
    total = rows[0][7] if rows else 0
    body = {
        "ok": True,
        "count": len(rows),
        "total": total,
        "limit": 10,
        "offset": 0,
        "events": [
            {
                "id": public_id,
                "url": f"/events/{public_id}/",
                "title": title,
                "summary": summary,
                "startsAt": aware(starts_at).astimezone(zone).isoformat(),
                "location": location,
                "price": price,
                "level": level,
            }
            for public_id, title, summary, starts_at, location, price, level, *_ in rows
        ],
        "appliedFilters": {name: applied[name] for name in FILTERS if name in applied},
        "uiUpdated": False,
        "stateVersion": 0,
    }
    return HttpResponse(orjson.dumps(body), content_type="application/json")


urlpatterns = [
    path("bench/bare", bare, name="bench-bare"),
    path("bench/floor", floor, name="bench-floor"),
    path("", include(site_urls)),
]

handler404 = site_urls.handler404
handler500 = site_urls.handler500
