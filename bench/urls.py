"""The site's URLs plus the bench's two ceilings for the search API: a bare view and a floor view.

Both are plain Django views behind the same middleware, on the same server.

- The bare view reads nothing from the database and returns, unchanged, a JSON body captured from
  the API before the load starts (its path is in BENCH_BARE_BODY): the framework's ceiling.
- The floor view does the work the answer needs and nothing else: the search endpoint's SQL (the
  count and the page, the same statements with the same conditions) through a raw cursor, rows turned
  into the same JSON bytes with orjson, which the API's renderer also uses. It is the fair ceiling:
  what a hand-written view could reach. The bench checks before the load that it answers the API's
  bytes exactly.
"""

import functools
import os
from pathlib import Path
from zoneinfo import ZoneInfo

import orjson
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.utils import timezone

from config import urls as site_urls

FILTERS = ("location", "price", "level")
COUNT_SQL = (
    'SELECT COUNT(*) AS "__count" FROM "events_event" '
    'WHERE ("events_event"."status" = %s AND "events_event"."starts_at" > %s{filters})'
)
PAGE_SQL = (
    'SELECT "events_event"."public_id", "events_event"."title", "events_event"."summary", '
    '"events_event"."starts_at", "events_event"."location", "events_event"."price", "events_event"."level" '
    'FROM "events_event" '
    'WHERE ("events_event"."status" = %s AND "events_event"."starts_at" > %s{filters}) '
    'ORDER BY "events_event"."starts_at" ASC, "events_event"."id" ASC LIMIT 10'
)


@functools.cache
def bare_body() -> bytes:
    return Path(os.environ["BENCH_BARE_BODY"]).read_bytes()


def bare(request: HttpRequest) -> HttpResponse:
    return HttpResponse(bare_body(), content_type="application/json")


def floor(request: HttpRequest) -> HttpResponse:
    """`GET /bench/floor?location=…&price=…&level=…`: the search answer with no framework in the way."""
    applied = {name: request.GET[name] for name in FILTERS if request.GET.get(name)}
    where = "".join(f' AND "events_event"."{name}" = %s' for name in applied)
    params = ["published", timezone.now(), *applied.values()]
    zone = ZoneInfo(settings.TIME_ZONE)
    with connection.cursor() as cursor:
        cursor.execute(COUNT_SQL.format(filters=where), params)
        total = cursor.fetchone()[0]
        rows = []
        if total:
            cursor.execute(PAGE_SQL.format(filters=where), params)
            rows = cursor.fetchall()
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
                "startsAt": starts_at.astimezone(zone).isoformat(),
                "location": location,
                "price": price,
                "level": level,
            }
            for public_id, title, summary, starts_at, location, price, level in rows
        ],
        "appliedFilters": applied,
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
