"""The site against pretix, what an organiser would otherwise install, in the same run (`--only peer`).

Both sites run side by side on this machine: ours on the writes' database (a copy of the bench's
main one, bench/writes.py), pretix 2026.8.0 on its own (bench/peer.py), each under gunicorn with the
same flags. Each pair of sides is measured in alternating slices at the same connections, and every
answer is checked. The reads go through wrk (status checked on every request, the content before the
load); the writes are whole visits (bench/visits.py), each a new person, after both databases were
restored from their seeded templates; afterwards each database must hold exactly the registrations or
paid orders that were answered. bench/README.md ("pretix in the same run") says what each side does
and what is not comparable.
"""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from itertools import count
from pathlib import Path

from bench import load, peer, visits
from bench.figures.mcp import rest_registration
from bench.figures.throughput import QUERY, SEARCH_PATH
from bench.infra import BenchError, banner, log
from bench.session import Session
from bench.tables import verdict
from bench.writes import WritesSite

NAME = "peer"
TARGETS = {"event_page": 5.0, "catalogue": 5.0, "rest_registration": 10.0, "browser_registration": 20.0}
#: At least this long a warm-up for each side: pretix's first pages in each worker compile its templates,
#: and on a busy machine a shorter wrk run saw no answer at all.
WARMUP_S = 3.0
ORDER_PAGE = re.compile(r"/order/[A-Z0-9]+/[a-z0-9]+/")


# ---- visits --------------------------------------------------------------------------------------


async def our_browser_registration(port: int, event: str, session_key: str, cookie: str) -> int:
    """A signed-in person without JavaScript: the event page, its form posted, the page it leads to,
    which must say they are registered."""
    visitor = visits.Visitor(port, cookies={cookie: session_key})
    page = f"/events/{event}/"
    shown = await visitor.send("GET", page)
    token = visits.csrf_token(shown, page)
    posted = await visitor.form(
        f"/events/{event}/register/", {"csrfmiddlewaretoken": token}, referer=page, expect=(302, 303)
    )
    confirmation = await visitor.send("GET", posted.header("location"))
    if b'class="status-registered"' not in confirmation.body:
        raise visits.VisitFailed("the page after the form does not say the person is registered")
    return visitor.requests


async def pretix_checkout(port: int, seeded: dict, email: str) -> int:
    """pretix's shop as a browser without JavaScript goes through it: nine requests, a fresh cookie
    jar, the CSRF token of each form and a Referer; the order page at the end must be an order's."""
    visitor = visits.Visitor(port)
    base = f"/{seeded['organizer']}/{seeded['event']}/"
    shown = await visitor.send("GET", base)
    item = {"csrfmiddlewaretoken": visits.csrf_token(shown, base), f"item_{seeded['item']}": "1"}
    added = await visitor.form(f"{base}cart/add", item, referer=base, expect=(302,))
    await visitor.send("GET", added.header("location"))
    started = await visitor.send("GET", f"{base}checkout/start", expect=(302,))
    questions = visits._path(started.header("location"))
    asked = await visitor.send("GET", questions)
    answer = {"csrfmiddlewaretoken": visits.csrf_token(asked, questions), "email": email}
    answered = await visitor.form(questions, answer, referer=questions, expect=(302,))
    confirm = visits._path(answered.header("location"))
    shown = await visitor.send("GET", confirm)
    placed = await visitor.form(
        confirm, {"csrfmiddlewaretoken": visits.csrf_token(shown, confirm)}, referer=confirm, expect=(302,)
    )
    order = placed.header("location")
    if not ORDER_PAGE.search(order):
        raise visits.VisitFailed(f"placing the order led to {order!r}, not an order's page")
    await visitor.send("GET", order)
    return visitor.requests


async def pretix_api_order(port: int, seeded: dict, email: str) -> int:
    """`POST /api/v1/organizers/{o}/events/{e}/orders/` with the team's token: 201 and a paid order
    (a free order is paid when placed)."""
    visitor = visits.Visitor(port)
    order = {"email": email, "sales_channel": "web", "positions": [{"item": seeded["item"]}]}
    answer = await visitor.send(
        "POST",
        f"/api/v1/organizers/{seeded['organizer']}/events/{seeded['event']}/orders/",
        headers={"Authorization": f"Token {seeded['token']}", "Content-Type": "application/json"},
        body=json.dumps(order).encode(),
        expect=(201,),
    )
    if answer.json().get("status") != "p":
        raise visits.VisitFailed(f"pretix's order is not paid: {answer.body[:200]!r}")
    return visitor.requests


def _emails(kind: str) -> Iterator[str]:
    return (f"bench-{kind}-{n}@example.com" for n in count())


# ---- measuring -----------------------------------------------------------------------------------


def _get(url: str, headers: dict[str, str] | None = None) -> bytes:
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=20) as answer:
        if answer.status != 200:
            raise BenchError(f"{url} answered {answer.status}")
        return answer.read()


def _check_reads(ours: str, pretix: str, seeded: dict, event: str) -> None:
    """Each read side answers what it should before (and after) the load."""
    token = {"Authorization": f"Token {seeded['token']}"}
    checks = [
        (ours + f"/events/{event}/", None, b"Bench: a free event"),
        (ours + f"/events/?{QUERY}", None, b'id="webmcp-manifest"'),
        (ours + SEARCH_PATH, None, b'"ok":true'),
        (pretix + f"/{seeded['organizer']}/{seeded['event']}/", None, b"Free ticket"),
        (pretix + f"/{seeded['organizer']}/", None, b"Bench: a free event"),
        (pretix + f"/api/v1/organizers/{seeded['organizer']}/events/", token, b'"count":1'),
    ]
    for url, headers, shown in checks:
        body = _get(url, headers)
        if shown not in body.replace(b'": ', b'":'):
            raise BenchError(f"{url} does not show {shown!r}: {body[:300]!r}")


def measure(site: WritesSite, session: Session, statements: dict, profile: dict) -> dict:
    try:
        peer.install()
    except peer.PeerUnavailable as error:
        banner(f"pretix could not be installed: {error}", "The peer rows are not measured.")
        return {"unavailable": str(error)}
    setup = site.setup
    log(f"pretix {peer.VERSION}: its database seeded from the migrated one (quota {setup['capacity']})")
    seeded = peer.prepare(session.dbs, session.workdir, capacity=setup["capacity"])
    config = Path(seeded["config"])
    pretix = peer.PretixServer(config, session.workdir)
    session.servers.append(pretix)  # type: ignore[arg-type]  (stopped with the session's servers)
    theirs = peer.side(config, "statements", "--host", "127.0.0.1:8000", "--token", seeded["token"])
    site.reset()
    pretix.start()
    ours, base = site.server.base_url, pretix.base_url
    event, organizer = setup["event"], seeded["organizer"]
    connections = profile["peer_connections"]
    _check_reads(ours, base, seeded, event)
    log(f"ours vs pretix: event page, catalogue, API list; {connections} connections, alternating")
    slices = load.alternate(
        {
            "event": f"{ours}/events/{event}/",
            "pretix_event": f"{base}/{organizer}/{seeded['event']}/",
            "list": f"{ours}/events/?{QUERY}",
            "pretix_list": f"{base}/{organizer}/",
            "api": ours + SEARCH_PATH,
            "pretix_api": f"{base}/api/v1/organizers/{organizer}/events/",
        },
        rounds=profile["rounds"],
        seconds=profile["slice_s"],
        connections=connections,
        threads=2,
        warmup=max(profile["warmup_s"], WARMUP_S),
        headers={"pretix_api": {"Authorization": f"Token {seeded['token']}"}},
    )
    reads = {name: load.summarize(items) for name, items in slices.items()}
    _check_reads(ours, base, seeded, event)
    logged = _logged(site, pretix)  # each server's log starts again when it is restarted
    runs = {}
    for name, (our_visits, their_visits) in {
        "rest": (
            lambda port: (
                lambda token=token: rest_registration(port, event, token) for _, token in site.people()
            ),
            lambda port: (
                lambda email=email: pretix_api_order(port, seeded, email) for email in _emails("api")
            ),
        ),
        "browser": (
            lambda port: (
                lambda key=key: our_browser_registration(port, event, key, setup["session_cookie"])
                for key, _ in site.people()
            ),
            lambda port: (
                lambda email=email: pretix_checkout(port, seeded, email) for email in _emails("shop")
            ),
        ),
    }.items():
        log(f"ours vs pretix: {name} registrations; both databases restored from their templates")
        pretix.stop()
        peer.reset(session.dbs)
        site.reset()
        pretix.start()
        measured = visits.alternate(
            {"ours": our_visits(site.server.port), "pretix": their_visits(pretix.port)},
            rounds=profile["rounds"],
            seconds=profile["slice_s"],
            connections=connections,
            warmup=profile["warmup_s"],
        )
        logged += _logged(site, pretix)
        stored = peer.side(config, "check")
        runs[name] = {
            **measured,
            "confirmed": site.confirmed(),
            "paid_positions": stored["paid_positions"],
            "pretix_orders": stored["orders"],
        }
    pretix.stop()
    return {
        "version": peer.VERSION,
        "connections": connections,
        "capacity": setup["capacity"],
        "reads": reads,
        "runs": runs,
        "statements": {"ours": statements["rows"], "pretix": theirs["statements"]},
        "ratios": {
            "event_page": _ratio(reads["event"]["rate"], reads["pretix_event"]["rate"]),
            "list": _ratio(reads["list"]["rate"], reads["pretix_list"]["rate"]),
            "api": _ratio(reads["api"]["rate"], reads["pretix_api"]["rate"]),
            "rest": _ratio(runs["rest"]["ours"]["rate"], runs["rest"]["pretix"]["rate"]),
            "browser": _ratio(runs["browser"]["ours"]["rate"], runs["browser"]["pretix"]["rate"]),
        },
        "errors": sum(side["errors"] for side in reads.values())
        + sum(side["failed"] for run in runs.values() for side in (run["ours"], run["pretix"])),
        "server_errors_logged": logged[:10],
    }


def _logged(site: WritesSite, pretix: peer.PretixServer) -> list[str]:
    """Errors both servers logged since they were started (before they are stopped, whose lines are not
    errors)."""
    return site.server.errors_logged() + pretix.errors_logged()


def _ratio(ours: float, theirs: float) -> float:
    return round(ours / theirs, 2) if theirs else 0.0


def _ours_sql(p: dict, name: str) -> str:
    values = sorted(set(p["statements"]["ours"].get(name, {}).values()))
    return "–".join(map(str, values)) or "?"


def rows(p: dict) -> list[tuple[str, str, str, str]]:
    if "unavailable" in p:
        return [("ours ÷ pretix (the peer rows)", f"not measured: {p['unavailable']}", "", verdict(False))]
    ok = p["errors"] == 0 and not p["server_errors_logged"]
    r, reads, runs, theirs = p["ratios"], p["reads"], p["runs"], p["statements"]["pretix"]

    def read_row(label: str, key: str, side: str, ours_sql: str, their_sql: str, target: float):
        return (
            label,
            f"{r[key]:.1f} ({reads[side]['rate']:.0f} vs {reads['pretix_' + side]['rate']:.0f} req/s; "
            f"SQL {_ours_sql(p, ours_sql)} vs {theirs[their_sql]})",
            f"≥ {target:g}",
            verdict(r[key] >= target and ok),
        )

    rest, browser = runs["rest"], runs["browser"]
    return [
        read_row("event page ÷ pretix's event page", "event_page", "event", "event page", "event page", 5),
        read_row("/events/ ÷ pretix's organiser page", "list", "list", "/events/ page", "organiser page", 5),
        read_row("API search ÷ pretix's API event list", "api", "api", "API search", "API event list", 5),
        (
            "REST registration (bearer token) ÷ pretix's API order (its token)",
            f"{r['rest']:.1f} ({rest['ours']['rate']:.0f} vs {rest['pretix']['rate']:.1f} per s; SQL "
            f"{_ours_sql(p, 'REST registration (bearer token)')} vs {theirs['API order']})",
            f"≥ {TARGETS['rest_registration']:g}",
            verdict(r["rest"] >= TARGETS["rest_registration"] and ok),
        ),
        (
            "registration by a browser without JavaScript ÷ pretix's shop checkout",
            f"{r['browser']:.1f} ({browser['ours']['rate']:.1f} vs {browser['pretix']['rate']:.1f} per s; "
            f"{browser['ours']['requests_per_visit']:g} vs "
            f"{browser['pretix']['requests_per_visit']:g} requests; "
            f"SQL {_ours_sql(p, 'browser registration (3 requests)')} vs {theirs['checkout (9 requests)']})",
            f"≥ {TARGETS['browser_registration']:g}",
            verdict(r["browser"] >= TARGETS["browser_registration"] and ok),
        ),
    ]


def failures(p: dict) -> list[str]:
    if "unavailable" in p:
        return []
    found = []
    if p["errors"]:
        found.append(f"peer: {p['errors']} failed requests or visits")
    if p["server_errors_logged"]:
        found.append(f"peer: server errors logged: {p['server_errors_logged'][:3]}")
    for name, run in p["runs"].items():
        ours = run["ours"]["completed"] + run["ours"]["warmup_completed"]
        theirs = run["pretix"]["completed"] + run["pretix"]["warmup_completed"]
        if run["confirmed"] != ours:
            found.append(f"peer {name}: {ours} registrations answered, {run['confirmed']} confirmed")
        if run["paid_positions"] != theirs:
            found.append(f"peer {name}: pretix answered {theirs} orders, {run['paid_positions']} paid")
    return found


def notes(p: dict) -> list[str]:
    if "unavailable" in p:
        return []
    steps = {
        k.removeprefix("checkout: "): v
        for k, v in p["statements"]["pretix"].items()
        if k.startswith("checkout: ")
    }
    return [
        f"peer: pretix {p['version']}, 2 sync workers each, {p['connections']} connections; pretix's "
        "checkout statements per request: " + ", ".join(f"{name} {value}" for name, value in steps.items())
    ]
