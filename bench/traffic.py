"""The soak's traffic: an open-loop mix of reads and writes at a steady rate, from a pool of threads.

Searches, event details, the list and detail pages, save/unsave and register/cancel by signed-in users
(sessions created in setup; CSRF cookie plus header). A dispatcher puts one tick on a queue every 1/rate
seconds whatever the answers do; each client thread sends one request per tick on its own connection and
records what it saw in the tally.
"""

from __future__ import annotations

import http.client
import queue
import random
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from bench.load import CSRF
from bench.tables import markdown

LOCATIONS = ("", "taipei", "kaohsiung", "online")
PRICES = ("", "free", "paid")
LEVELS = ("", "beginner", "intermediate", "advanced")
QUERIES = ("", "", "", "Django", "WebMCP", "Python", "meetup")

#: Share of each kind of request in the mix (a write kind toggles: save or unsave, register or cancel).
MIX = {
    "search": 35,
    "details": 20,
    "list page": 10,
    "detail page": 10,
    "save/unsave": 12,
    "register/cancel": 13,
}
KINDS = (
    "search",
    "details",
    "list page",
    "detail page",
    "save",
    "unsave",
    "register",
    "cancel",
)


@dataclass
class Tally:
    """What the clients saw, per kind of request; shared by the client threads under `lock`."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: dict[str, dict[str, int]] = field(default_factory=lambda: {kind: {} for kind in KINDS})
    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    client_errors: list[str] = field(default_factory=list)
    lag_ms: list[float] = field(default_factory=list)  # scheduled send time → actual send
    skipped: int = 0  # ticks dropped because every client thread was busy and the queue was full

    def record(self, kind: str, status: int, latency_ms: float, lag_ms: float, error: str = "") -> None:
        with self.lock:
            counts = self.statuses[kind]
            counts[str(status)] = counts.get(str(status), 0) + 1
            self.latencies_ms[kind].append(latency_ms)
            self.lag_ms.append(lag_ms)
            if error and len(self.client_errors) < 20:
                self.client_errors.append(f"{kind}: {error}")


class Held:
    """The (user, event) pairs a write kind currently holds (saved, or registered), as the soak believes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pairs: list[tuple[int, int]] = []
        self.members: set[tuple[int, int]] = set()

    def take(self, *, undo: bool, slot: float, new: tuple[int, int]) -> tuple[bool, tuple[int, int]]:
        """(True, a held pair, now released) to undo, or (False, `new`, now held) to do."""
        with self.lock:
            if (undo or new in self.members) and self.pairs:
                index = int(slot * len(self.pairs))
                self.pairs[index], self.pairs[-1] = self.pairs[-1], self.pairs[index]
                pair = self.pairs.pop()
                self.members.discard(pair)
                return True, pair
            self.pairs.append(new)
            self.members.add(new)
            return False, new


class Traffic:
    """The mix: picks a request, sends it on the thread's connection, remembers what the writes did.

    Writes undo or do: half the time (when there is one) a (user, event) pair the soak saved earlier
    is unsaved, otherwise a random pair is saved; the same for registrations. So the number of saves
    and registrations held stays bounded, and both directions get exercised. Two threads may race on
    the same pair; the loser's 404 or 409 is part of the mix.
    """

    def __init__(self, setup: dict, *, events: int, write_pool: int, seed: int) -> None:
        self.sessions = setup["sessions"]
        self.session_cookie = setup["session_cookie"]
        self.csrf_cookie = setup["csrf_cookie"]
        self.events = events
        self.write_pool = min(write_pool, events)
        self.random = random.Random(seed)
        self.random_lock = threading.Lock()
        self.held: dict[str, Held] = {"save/unsave": Held(), "register/cancel": Held()}
        self.kinds = list(MIX)
        self.weights = [MIX[kind] for kind in self.kinds]

    def pick(self) -> tuple[str, str, str, int | None]:
        """(kind, method, path, user index or None for an anonymous visitor)."""
        with self.random_lock:
            r = self.random
            group = r.choices(self.kinds, self.weights)[0]
            user = r.randrange(len(self.sessions))
            anonymous = r.random() < 0.5
            event = r.randrange(self.events)
            pooled = r.randrange(self.write_pool)
            params = {
                "location": r.choice(LOCATIONS),
                "price": r.choice(PRICES),
                "level": r.choice(LEVELS),
                "query": r.choice(QUERIES),
                "limit": r.choice((10, 10, 20, 50)),
                "offset": r.choice((0, 0, 0, 10, 20)),
            }
            page_query = r.random() < 0.5
            undo = r.random() < 0.5
            slot = r.random()
        reader = None if anonymous else user
        if group == "search":
            query = urlencode({key: value for key, value in params.items() if value not in ("", 0)})
            return "search", "GET", f"/api/events?{query}" if query else "/api/events", reader
        if group == "details":
            return "details", "GET", f"/api/events/evt-bench-{event}", reader
        if group == "list page":
            form = {key: params[key] for key in ("location", "price", "level") if params[key]}
            path = f"/events/?{urlencode(form)}" if page_query and form else "/events/"
            return "list page", "GET", path, reader
        if group == "detail page":
            return "detail page", "GET", f"/events/evt-bench-{event}/", reader
        undone, (user, pooled) = self.held[group].take(undo=undo, slot=slot, new=(user, pooled))
        if group == "save/unsave":
            kind, method = ("unsave", "DELETE") if undone else ("save", "PUT")
            return kind, method, f"/api/me/saved/evt-bench-{pooled}", user
        kind, method = ("cancel", "DELETE") if undone else ("register", "POST")
        return kind, method, f"/api/events/evt-bench-{pooled}/registration", user

    def headers(self, user: int | None, method: str, path: str) -> dict[str, str]:
        headers = {"Accept": "application/json" if path.startswith("/api/") else "text/html"}
        if user is not None:
            headers["Cookie"] = f"{self.session_cookie}={self.sessions[user]}; {self.csrf_cookie}={CSRF}"
        if method != "GET":
            headers["X-CSRFToken"] = CSRF
            headers["Content-Type"] = "application/json"
        return headers


def client(port: int, traffic: Traffic, ticks: queue.Queue, tally: Tally, stop: threading.Event) -> None:
    """One client thread: one connection (kept alive when the server allows), one request per tick."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        while not stop.is_set():
            try:
                scheduled = ticks.get(timeout=0.5)
            except queue.Empty:
                continue
            if scheduled is None:  # the dispatcher is done
                return
            kind, method, path, user = traffic.pick()
            sent = time.perf_counter()
            try:
                connection.request(
                    method,
                    path,
                    body=b"" if method != "GET" else None,
                    headers=traffic.headers(user, method, path),
                )
                response = connection.getresponse()
                response.read()
                status, error = response.status, ""
                if response.will_close:
                    connection.close()  # gunicorn's sync workers close after each answer
            except (OSError, http.client.HTTPException) as failure:
                status, error = 0, f"{type(failure).__name__}: {failure}"
                connection.close()
            done = time.perf_counter()
            tally.record(kind, status, (done - sent) * 1000, (sent - scheduled) * 1000, error)
    finally:
        connection.close()


def dispatch(*, rate: float, seconds: float, ticks: queue.Queue, tally: Tally, stop: threading.Event) -> None:
    """Open loop: one tick every 1/rate s for `seconds`, whatever the answers do (bounded in count)."""
    start = time.perf_counter()
    total = int(seconds * rate)
    for index in range(total):
        if stop.is_set():
            return
        due = start + index / rate
        pause = due - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        try:
            ticks.put_nowait(due)
        except queue.Full:
            with tally.lock:
                tally.skipped += 1


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
    return round(ordered[rank], 1)


def summarize(tally: Tally) -> dict:
    """Per kind of request: count, status codes, 5xx, no answer, p50/p99/max latency."""
    kinds = {}
    for kind in KINDS:
        latencies = tally.latencies_ms[kind]
        statuses = dict(sorted(tally.statuses[kind].items()))
        kinds[kind] = {
            "requests": len(latencies),
            "statuses": statuses,
            "server_errors": sum(n for status, n in statuses.items() if int(status) >= 500),
            "no_answer": statuses.get("0", 0),
            "p50_ms": percentile(latencies, 0.50),
            "p99_ms": percentile(latencies, 0.99),
            "max_ms": round(max(latencies), 1) if latencies else None,
        }
    return kinds


def table(result: dict) -> str:
    rows = []
    for kind, row in result["kinds"].items():
        statuses = ", ".join(f"{status}×{count}" for status, count in row["statuses"].items()) or "–"
        rows.append(
            (
                kind,
                str(row["requests"]),
                statuses,
                str(row["server_errors"] + row["no_answer"]),
                f"{row['p50_ms']:.1f}" if row["p50_ms"] is not None else "–",
                f"{row['p99_ms']:.1f}" if row["p99_ms"] is not None else "–",
            )
        )
    rows.append(
        ("all", str(result["requests"]), "", str(result["server_errors"] + result["no_answer"]), "", "")
    )
    return markdown(rows, ("request", "count", "status codes", "5xx / no answer", "p50 ms", "p99 ms"))
