"""Pages against the API, and conditional GETs against full ones, in one alternating wrk run.

The list page `/events/?…` and the API search `GET /api/events?…` answer the same search on the same
server; each ratio is the page's throughput ÷ the API's, for an anonymous visitor (a CSRF cookie, as
after a first visit) and for a signed-in one (a session from the bench's setup, and the CSRF cookie).
The conditional rows send the ETag of the visitor's previous answer (`If-None-Match`), which the site
answers 304 while nothing the page shows has changed (core/conditional.py): their cost ÷ a full GET's,
for the list page, an event's page and the API search.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path

from bench import load
from bench.figures.throughput import QUERY, SEARCH_PATH
from bench.infra import BenchError, Server, log
from bench.tables import verdict

NAME = "pages"
TARGETS = {"page_anonymous_ratio": 0.5, "page_signed_in_ratio": 0.35, "conditional_cost_ratio": 1 / 3}
PAGE_PATH = f"/events/?{QUERY}"
#: An event's page: the first of the bench's events (bench/tasks.py).
EVENT_PATH = "/events/evt-bench-0/"


def get(url: str, headers: dict[str, str]) -> tuple[int, Message, bytes]:
    assert url.startswith("http://127.0.0.1:"), url
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def _check(server: Server, path: str, headers: dict[str, str], *, shown: bytes, public: bool) -> str:
    """The answer's ETag, after checking the answer: a full page or search, cached as it must be, and
    304 when asked again with its ETag."""
    url = server.base_url + path
    status, answered, body = get(url, headers)
    if status != 200 or shown not in body:
        raise BenchError(f"{path} did not answer its page ({status}): {body[:300]!r}")
    etag, control = answered.get("ETag", ""), answered.get("Cache-Control", "")
    if not etag:
        return ""  # a site without conditional GETs: the conditional rows are left out
    if ("public" in control) != public or (not public and "private" not in control):
        raise BenchError(f"{path}: Cache-Control {control!r} for {'anonymous' if public else 'this'} visitor")
    again, _, rest = get(url, {**headers, "If-None-Match": etag})
    if again != 304 or rest:
        raise BenchError(f"{path} with its own ETag answered {again}, not 304")
    return etag


def measure(server: Server, workdir: Path, profile: dict) -> dict:
    setup = json.loads((workdir / "sessions.json").read_text())
    csrf = f"{setup['csrf_cookie']}={load.CSRF}"
    anonymous = {"Cookie": csrf}
    signed_in = {"Cookie": f"{setup['session_cookie']}={setup['sessions'][0]}; {csrf}"}
    manifest = b'id="webmcp-manifest"'
    page_etag = _check(server, PAGE_PATH, anonymous, shown=manifest, public=False)
    api_etag = _check(server, SEARCH_PATH, {}, shown=b'"ok":true', public=True)
    _check(server, PAGE_PATH, signed_in, shown=b'action="/accounts/logout/"', public=False)
    event_etag = _check(server, EVENT_PATH, anonymous, shown=manifest, public=False)
    sides = {"api": SEARCH_PATH, "page": PAGE_PATH, "api_signed_in": SEARCH_PATH, "page_signed_in": PAGE_PATH}
    headers = {"api": anonymous, "page": anonymous, "api_signed_in": signed_in, "page_signed_in": signed_in}
    if page_etag and api_etag and event_etag:
        sides |= {"page_304": PAGE_PATH, "event": EVENT_PATH, "event_304": EVENT_PATH, "api_304": SEARCH_PATH}
        headers |= {
            "page_304": {**anonymous, "If-None-Match": page_etag},
            "event": anonymous,
            "event_304": {**anonymous, "If-None-Match": event_etag},
            "api_304": {**anonymous, "If-None-Match": api_etag},
        }
    log(f"pages vs API search, conditional vs full GETs, {profile['connections']} connections, alternating")
    logged_before = len(server.errors_logged())
    slices = load.alternate(
        {name: server.base_url + path for name, path in sides.items()},
        rounds=profile["rounds"],
        seconds=profile["slice_s"],
        connections=profile["connections"],
        threads=2,
        warmup=profile["warmup_s"],
        headers=headers,
    )
    measured = {name: load.summarize(items) for name, items in slices.items()}
    logged = server.errors_logged()[logged_before:]
    rate = {name: side["rate"] for name, side in measured.items()}
    figure = {
        "page_path": PAGE_PATH,
        "api_path": SEARCH_PATH,
        "connections": profile["connections"],
        "sides": measured,
        "page_anonymous_ratio": round(rate["page"] / rate["api"], 3),
        "page_signed_in_ratio": round(rate["page_signed_in"] / rate["api_signed_in"], 3),
        "errors": sum(side["errors"] for side in measured.values()) + len(logged),
        "server_errors_logged": logged[:10],
    }
    if "page_304" in rate:
        # Cost per request is the inverse of throughput on the same server: full ÷ conditional rate.
        figure["conditional_cost_ratio"] = round(rate["page"] / rate["page_304"], 3)
        figure["event_conditional_cost_ratio"] = round(rate["event"] / rate["event_304"], 3)
        figure["api_conditional_cost_ratio"] = round(rate["api"] / rate["api_304"], 3)
    return figure


def rows(p: dict) -> list[tuple[str, str, str, str]]:
    ok = p["errors"] == 0
    rate = {name: side["rate"] for name, side in p["sides"].items()}
    table = [
        (
            "/events/ page ÷ API search throughput, anonymous",
            f"{p['page_anonymous_ratio']:.2f} ({rate['page']:.0f} vs {rate['api']:.0f} req/s)",
            f"≥ {TARGETS['page_anonymous_ratio']}",
            verdict(p["page_anonymous_ratio"] >= TARGETS["page_anonymous_ratio"] and ok),
        ),
        (
            "/events/ page ÷ API search throughput, signed in",
            f"{p['page_signed_in_ratio']:.2f} "
            f"({rate['page_signed_in']:.0f} vs {rate['api_signed_in']:.0f} req/s)",
            f"≥ {TARGETS['page_signed_in_ratio']}",
            verdict(p["page_signed_in_ratio"] >= TARGETS["page_signed_in_ratio"] and ok),
        ),
    ]
    if "conditional_cost_ratio" not in p:
        missing = ("conditional GET (304) ÷ full GET, /events/", "no ETag", "≤ 0.33", verdict(False))
        return [*table, missing]
    return [
        *table,
        (
            "conditional GET (304) ÷ full GET, cost per request, /events/ anonymous",
            f"{p['conditional_cost_ratio']:.2f} ({rate['page_304']:.0f} vs {rate['page']:.0f} req/s)",
            f"≤ {TARGETS['conditional_cost_ratio']:.2f}",
            verdict(p["conditional_cost_ratio"] <= TARGETS["conditional_cost_ratio"] and ok),
        ),
        (
            "conditional GET (304) ÷ full GET, cost per request, event page anonymous",
            f"{p['event_conditional_cost_ratio']:.2f} ({rate['event_304']:.0f} vs {rate['event']:.0f} req/s)",
            f"≤ {TARGETS['conditional_cost_ratio']:.2f}",
            verdict(p["event_conditional_cost_ratio"] <= TARGETS["conditional_cost_ratio"] and ok),
        ),
        (
            "conditional GET (304) ÷ full GET, cost per request, API search anonymous",
            f"{p['api_conditional_cost_ratio']:.2f} ({rate['api_304']:.0f} vs {rate['api']:.0f} req/s)",
            "information",
            "–",
        ),
    ]


def failures(p: dict) -> list[str]:
    return [f"pages: {p['errors']} failed requests or server errors"] if p["errors"] else []
