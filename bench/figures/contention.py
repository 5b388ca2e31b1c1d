"""A registration rush on popular events, beside the API search and another visitor's pages.

Each rush event has `capacity` seats, asks three questions and sells two paid ticket types
(bench/registration_form.py), and every signed-in person of the setup (`users`, distinct, each with a
session made in setup) sends one `POST /api/events/<id>/registration` to it with their answers and a
ticket type, `rush_connections` at a time: a registration holds its seat waiting for its transfer
(`pending_payment`). Right next to each rush, alternating (S R R S …), the same client sends the API search at
the same number of connections for `slice_s`, so attempts/s ÷ searches/s is measured side by side.
Meanwhile another visitor opens `/events/` at a low steady rate (bench/sampler.py, its own process):
its p99 during the rushes is compared with its p99 on the idle server, measured first (a note: one
pool of sync workers, where waiting attempts stall the pages). Then `pool_rushes` more rushes through
the deployment's layout, nginx with deploy/nginx.conf in front of two gunicorn pools on the same
database and machine, reads on one and writes on the other: the visitor's p99 ratio there is the row,
and the proxy's access log shows that no request reached the wrong pool.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from typing import Any

from bench import load
from bench.figures.throughput import SEARCH_PATH
from bench.infra import PYTHON, ROOT, BenchError, Server, http_get, log
from bench.session import Session
from bench.tables import verdict
from harness.proxy import ProxyProcess

NAME = "contention"
TARGETS = {"rush_search_ratio": 0.5, "visitor_p99_ratio": 3.0}
CONTENTION_PATH = "/api/events/{event}/registration"
VISITOR_PATH = "/events/"


def measure(server: Server, session: Session, url: str, profile: dict) -> dict:
    setup = json.loads((session.workdir / "sessions.json").read_text())
    sessions, connections = setup["sessions"], profile["rush_connections"]
    events, pooled = setup["events"][: -profile["pool_rushes"]], setup["events"][-profile["pool_rushes"] :]
    log(
        f"contention: {len(events)} rushes of {len(sessions)} registrations for {setup['capacity']} seats, "
        f"{connections} connections, alternating with the API search; /events/ at "
        f"{profile['visitor_rate']:g}/s beside them"
    )
    port = server.port
    search = [load.request_bytes("GET", SEARCH_PATH, port=port, headers={"Accept": "application/json"})]
    _warm(server.base_url)
    load.closed_loop(port=port, requests=search, connections=connections, seconds=profile["warmup_s"])
    logged_before = len(server.errors_logged())
    windows: dict[str, list[tuple[float, float]]] = {"idle": [], "search": [], "rush": []}
    rushes: list[dict[str, Any]] = []
    searches: list[dict[str, Any]] = []
    visitor = _visitor_process(port, profile)
    try:
        began = time.time()
        time.sleep(profile["idle_s"])
        windows["idle"].append((began, time.time()))
        for index, event in enumerate(events):
            for side in ("search", "rush") if index % 2 == 0 else ("rush", "search"):
                began = time.time()
                if side == "search":
                    answered = load.closed_loop(
                        port=port, requests=search, connections=connections, seconds=profile["slice_s"]
                    )
                    searches.append(answered)
                else:
                    answered = _rush(port, event, setup, connections)
                    rushes.append(answered)
                windows[side].append((began, time.time()))
                _said(side, answered)
    finally:
        samples = _stopped(visitor)
    pool = _own_pool(server, session, url, setup, pooled, profile)
    stored = session.task(url, "contention-check", "--event", *events, *pooled, timeout=120)["events"]
    logged = server.errors_logged()[logged_before:]
    return _figure(setup, connections, rushes, searches, samples, windows, stored, logged, pool)


def _own_pool(
    server: Server, session: Session, url: str, setup: dict, events: list[str], profile: dict
) -> dict:
    """The same rushes through the deployment's own layout: nginx with deploy/nginx.conf in front,
    sending the pages (reads) to a second gunicorn on the same database and machine and the
    registrations (writes) to the bench's server, a pool of their own. Visitor and rushes both go
    through the proxy, as a browser and a client would."""
    pages = session.server("pages", url)
    pages.start()
    proxy = ProxyProcess("contention", pages=pages.port, writes=server.port, workdir=session.workdir)
    try:
        proxy.start(timeout=30)
        _warm(proxy.base_url)
        windows: dict[str, list[tuple[float, float]]] = {"idle": [], "rush": []}
        rushes = []
        visitor = _visitor_process(proxy.port, profile)
        try:
            began = time.time()
            time.sleep(profile["idle_s"])
            windows["idle"].append((began, time.time()))
            for event in events:
                began = time.time()
                rushes.append(_rush(proxy.port, event, setup, profile["rush_connections"]))
                windows["rush"].append((began, time.time()))
                _said("rush", rushes[-1], "(through nginx, writes on a pool of their own)")
        finally:
            samples = _stopped(visitor)
        logged = pages.errors_logged()
    finally:
        proxy.stop()  # every line of its access log written
        pages.stop()
    return {
        "rushes": rushes,
        "visitor": {side: _visitor(samples, spans) for side, spans in windows.items()},
        "logged": logged,
        "routed": _routed(proxy, pages=pages.port, writes=server.port),
    }


def _routed(proxy: ProxyProcess, *, pages: int, writes: int) -> dict[str, int]:
    """How many requests of each kind the proxy sent to the pool it should not have (from its access
    log, whose lines end with the upstream's address): both 0 when deploy/nginx.conf routes right."""
    misrouted = {"reads": 0, "writes": 0}
    for line in proxy.access_log_path.read_text().splitlines():
        write = '"POST ' in line
        expected = writes if write else pages
        if not line.endswith(f"127.0.0.1:{expected}"):
            misrouted["writes" if write else "reads"] += 1
    return misrouted


def _warm(base_url: str) -> None:
    for path in (SEARCH_PATH, VISITOR_PATH):  # the first answers compile and fill caches
        status, body = http_get(base_url + path)
        if status != 200:
            raise BenchError(f"{path} answered {status}: {body[:300]!r}")


def _rush(port: int, event: str, setup: dict, connections: int) -> dict:
    requests = load.registration_requests(
        port=port,
        path=CONTENTION_PATH.format(event=event),
        sessions=setup["sessions"],
        session_cookie=setup["session_cookie"],
        csrf_cookie=setup["csrf_cookie"],
        bodies=setup["bodies"],
    )
    return {"event": event, **load.closed_loop(port=port, requests=requests, connections=connections)}


def _visitor_process(port: int, profile: dict) -> subprocess.Popen:
    visitor = subprocess.Popen(
        [
            *(PYTHON, "-m", "bench.sampler", "--port", str(port)),
            *("--path", VISITOR_PATH, "--rate", str(profile["visitor_rate"])),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)  # its interpreter starts
    return visitor


def _stopped(visitor: subprocess.Popen) -> list[dict]:
    visitor.send_signal(signal.SIGTERM)
    out, _ = visitor.communicate(timeout=60)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _said(side: str, answered: dict, note: str = "") -> None:
    log(
        f"  {side:>6}: {answered['rate']:7.1f} req/s  p50 {answered['p50_ms']:6.1f} ms  "
        f"p99 {answered['p99_ms']:6.1f} ms  {answered['statuses']} {note}"
    )


def _ratio(visitor: dict) -> float | None:
    idle = visitor["idle"]["p99_ms"]
    return round(visitor["rush"]["p99_ms"] / idle, 2) if idle else None


def _figure(
    setup: dict,
    connections: int,
    rushes: list[dict],
    searches: list[dict],
    samples: list[dict],
    windows: dict[str, list[tuple[float, float]]],
    stored: list[dict],
    logged: list[str],
    pool: dict,
) -> dict:
    capacity, attempts = setup["capacity"], len(setup["sessions"])
    by_event = {row["event"]: row for row in stored}
    logged = [*logged, *pool["logged"]]
    per_event = []
    for rush in [*rushes, *pool["rushes"]]:
        db, statuses = by_event[rush["event"]], rush["statuses"]
        server_errors = sum(
            count for status, count in statuses.items() if int(status) == 0 or int(status) >= 500
        )
        per_event.append(
            {
                "event": rush["event"],
                "created": statuses.get("201", 0),
                "event_full": rush["reasons"].get("EVENT_FULL", 0),
                "server_errors": server_errors,
                "confirmed": db["confirmed"],
                "holding": db["holding"],
                "pending_payment": db["pending_payment"],
                "answered": db["answered"],
                "paid_types": len(db["paid_types"]),
                "rows": db["rows"],
                "counter_right": db["seats_taken"] == db["seats_counted"],
                "oversold": max(0, db["holding"] - capacity),
            }
        )
    rush_rate = sum(r["requests"] for r in rushes) / sum(r["seconds"] for r in rushes)
    search_rate = sum(s["requests"] for s in searches) / sum(s["seconds"] for s in searches)
    visitor = {side: _visitor(samples, spans) for side, spans in windows.items()}
    figure = {
        "attempts": attempts,
        "capacity": capacity,
        "events": len(per_event),
        "connections": connections,
        "per_event": per_event,
        "holding": sorted({row["holding"] for row in per_event}),
        "pending_payment": sum(row["pending_payment"] for row in per_event),
        "ticket_types": min(row["paid_types"] for row in per_event),
        "oversold": sum(row["oversold"] for row in per_event),
        "server_errors": sum(row["server_errors"] for row in per_event) + len(logged),
        "attempts_per_s": round(rush_rate, 1),
        "search_per_s": round(search_rate, 1),
        "rush_search_ratio": round(rush_rate / search_rate, 3),
        "visitor": visitor,
        "visitor_p99_ratio": _ratio(visitor),
        "own_pool": pool["visitor"],
        "own_pool_ratio": _ratio(pool["visitor"]),
        "misrouted": pool["routed"],
        "rushes": rushes,
        "pool_rushes": pool["rushes"],
        "searches": searches,
        "server_errors_logged": logged[:10],
    }
    figure["ok"] = (
        all(
            row["holding"] == row["created"] == row["rows"] == row["answered"] == capacity
            and row["paid_types"] >= 2
            and row["event_full"] == attempts - capacity
            and row["server_errors"] == 0
            and row["counter_right"]
            for row in per_event
        )
        and not logged
        and all(s["statuses"].keys() == {"200"} for s in searches)
        and all(v["failed"] == 0 for v in [*visitor.values(), *pool["visitor"].values()])
        and not any(pool["routed"].values())
    )
    log(
        f"  {figure['attempts_per_s']} attempts/s vs {figure['search_per_s']} searches/s "
        f"({figure['rush_search_ratio']}); /events/ p99 {visitor['rush']['p99_ms']} ms in the rushes, "
        f"{visitor['idle']['p99_ms']} ms idle; holding seats {figure['holding']}, "
        f"{figure['server_errors']} 5xx"
    )
    return figure


def _visitor(samples: list[dict], spans: list[tuple[float, float]]) -> dict:
    """The other visitor's answers that began in `spans`."""
    inside = [s for s in samples if any(start <= s["t"] < end for start, end in spans)]
    latencies = sorted(s["ms"] for s in inside)
    return {
        "samples": len(inside),
        "failed": sum(1 for s in inside if s["status"] != 200),
        "p50_ms": round(load.percentile(latencies, 50), 1),
        "p99_ms": round(load.percentile(latencies, 99), 1),
        "max_ms": round(latencies[-1], 1) if latencies else 0.0,
    }


def rows(c: dict) -> list[tuple[str, str, str, str]]:
    holding = ", ".join(str(n) for n in c["holding"])
    return [
        (
            f"registration rush: {c['attempts']:,} people, {c['capacity']} seats, "
            f"{c['connections']} connections (× {c['events']} events), each attempt with 3 answers and "
            f"one of {c['ticket_types']} paid ticket types",
            f"{holding} confirmed or pending payment, {c['oversold']} oversold, {c['server_errors']} 5xx; "
            f"{c['attempts_per_s']:.0f} attempts/s",
            f"exactly {c['capacity']}, 0, 0",
            verdict(c["ok"]),
        ),
        (
            "rush attempts/s ÷ API search throughput, same connections",
            f"{c['rush_search_ratio']:.2f} ({c['attempts_per_s']:.0f} vs {c['search_per_s']:.0f} req/s)",
            f"≥ {TARGETS['rush_search_ratio']}",
            verdict(c["rush_search_ratio"] >= TARGETS["rush_search_ratio"] and c["ok"]),
        ),
        _visitor_row(
            "/events/ p99 for another visitor during the rush ÷ idle, through nginx "
            "(deploy/nginx.conf: writes on a pool of their own)",
            c["own_pool"],
        ),
    ]


def _visitor_row(label: str, visitor: dict) -> tuple[str, str, str, str]:
    rush, idle, ratio = visitor["rush"], visitor["idle"], _ratio(visitor)
    return (
        label,
        f"{ratio:.2f} ({rush['p99_ms']:.0f} vs {idle['p99_ms']:.0f} ms; "
        f"{rush['samples']} and {idle['samples']} requests)",
        f"≤ {TARGETS['visitor_p99_ratio']:.0f}",
        verdict(ratio is not None and ratio <= TARGETS["visitor_p99_ratio"]),
    )


def notes(c: dict) -> list[str]:
    search, same = c["visitor"]["search"], c["visitor"]
    misrouted = c.get("misrouted", {})
    return [
        f"rush: with pages and registrations on the same workers (no proxy), /events/ p99 during the "
        f"rush ÷ idle {_ratio(same) or 0:.2f} "
        f"({same['rush']['p99_ms']:.0f} vs {same['idle']['p99_ms']:.0f} ms): "
        "sync workers held by waiting attempts stall the pages, which is why the deployment puts writes "
        f"on a pool of their own; through nginx, requests on the wrong pool: {misrouted.get('reads', 0)} "
        f"reads, {misrouted.get('writes', 0)} writes",
        f"rush: /events/ p99 beside the API search at the same connections {search['p99_ms']:.0f} ms "
        f"({search['samples']} requests); the rushes' own p99 "
        + ", ".join(f"{r['p99_ms']:.0f}" for r in c["rushes"])
        + " ms",
    ]


def failures(c: dict) -> list[str]:
    if c["ok"]:
        return []
    return [
        f"contention: holding seats {c['holding']} for {c['capacity']} seats, {c['server_errors']} 5xx, "
        f"per event {c['per_event']}, logged {c['server_errors_logged'][:2]}"
    ]
