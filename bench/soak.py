"""`make soak`: steady mixed traffic for minutes; no 5xx, and no worker whose memory keeps growing.

    .venv/bin/python -m bench.soak                          # 300 s at 40 req/s (the README's figures)
    .venv/bin/python -m bench.soak --seconds 20 --warmup 5  # checks that the soak itself works

A load and soak run, not a test. It starts the same gunicorn server as `make bench` (2 sync workers,
DEBUG=0, DB_CONN_MAX_AGE=60, WRITE_THROTTLE_RATE=100000/min) on a database of its own
(`bench_agentready_soak`, created here and dropped at the end, also after an error or Ctrl-C), and
sends an open-loop mix at a steady rate from a pool of threads: searches, event details, the list and
detail pages, save/unsave and register/cancel by signed-in users (sessions created in setup; CSRF
cookie plus header). Every 10 s it reads the resident memory (VmRSS) of each gunicorn worker, a child
of the master process. Growth is measured from the sample after the warm-up to the last sample.

It prints a table, writes `bench/results/soak-<UTC timestamp>.json`, and exits non-zero if any
request got a 5xx or no answer, the server logged an error, a worker was replaced, or a worker's
memory grew by the limit (10 %) or more. 4xx answers (409 EVENT_FULL, 404 not saved, 429…) are
expected in this mix and are only counted.
"""

from __future__ import annotations

import argparse
import fcntl
import http.client
import json
import os
import platform
import queue
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

from bench.infra import DB_PREFIX, PYTHON, ROOT, WORKERS, BenchError, Databases, Server, banner, log, run
from bench.run import RESULTS, base_env, markdown, revision, task, with_db

DB_NAME = f"{DB_PREFIX}_soak"  # not the bench's names: a soak and a `make bench` may run side by side
CSRF = "b" * 32  # Django accepts its 32-character secret as the header token, equal to the cookie

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


class Stop(Exception):
    """SIGTERM, SIGHUP or the overall time limit: stop the load, clean up and leave."""


def on_signal(signum: int, frame: object) -> None:
    reason = "ran past its time limit" if signum == signal.SIGALRM else f"got {signal.Signals(signum).name}"
    raise Stop(f"the soak {reason}")


# ---- memory ------------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """Direct children of `pid` (gunicorn's workers are children of its master)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        return sorted(int(item) for item in text.split())
    except OSError:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # pid (comm) state ppid …; comm may hold spaces and parentheses, so split after the last ')'
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        return sorted(found)


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def sample_memory(master: int, elapsed: float) -> dict:
    workers = {str(pid): rss_kb(pid) for pid in children(master)}
    return {
        "t": round(elapsed, 1),
        "master_kb": rss_kb(master),
        "workers_kb": {pid: kb for pid, kb in workers.items() if kb is not None},
    }


# ---- load --------------------------------------------------------------------------------------


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


# ---- the run -----------------------------------------------------------------------------------


def prepare(dbs: Databases, env: dict[str, str], workdir: Path, args: argparse.Namespace) -> str:
    log(f"database: {dbs.version}; creating {DB_NAME}")
    url = dbs.create(DB_NAME)
    run(
        [PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"],
        env=with_db(env, url),
        timeout=300,
        what="migrate",
    )
    started = time.monotonic()
    filled = task(
        with_db(env, url),
        "populate",
        "--events",
        str(args.events),
        "--demo",
        "--contention-file",
        str(workdir / "sessions.json"),
        "--users",
        str(args.users),
        timeout=900,
    )
    log(
        f"filled: {filled['events']} events, {args.users} signed-in users "
        f"in {time.monotonic() - started:.0f} s"
    )
    run(
        [PYTHON, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        env=with_db(env, url),
        timeout=300,
        what="collectstatic",
    )
    return url


def soak(server: Server, setup: dict, args: argparse.Namespace) -> dict:
    assert server.process is not None
    master = server.process.pid
    port = server.port
    traffic = Traffic(setup, events=args.events, write_pool=args.write_pool, seed=args.seed)
    tally = Tally()
    stop = threading.Event()
    ticks: queue.Queue = queue.Queue(maxsize=max(1, int(args.rate * 2)))
    clients = [
        threading.Thread(
            target=client, args=(port, traffic, ticks, tally, stop), daemon=True, name=f"soak-{n}"
        )
        for n in range(args.clients)
    ]
    dispatcher = threading.Thread(
        target=dispatch,
        kwargs={"rate": args.rate, "seconds": args.seconds, "ticks": ticks, "tally": tally, "stop": stop},
        daemon=True,
        name="soak-dispatch",
    )
    logged_before = len(server.errors_logged())
    log(
        f"soak: {args.seconds:.0f} s at {args.rate:g} req/s, {args.clients} client threads, "
        f"memory every {args.interval:g} s"
    )
    samples = []
    started = time.perf_counter()
    try:
        for thread in clients:
            thread.start()
        dispatcher.start()
        samples.append(sample_memory(master, 0.0))
        next_sample = args.interval
        while dispatcher.is_alive() and time.perf_counter() - started < args.seconds + 60:
            dispatcher.join(timeout=max(0.0, min(1.0, started + next_sample - time.perf_counter())))
            elapsed = time.perf_counter() - started
            if elapsed >= next_sample and elapsed < args.seconds:
                samples.append(sample_memory(master, elapsed))
                last = samples[-1]
                with tally.lock:
                    sent = sum(len(values) for values in tally.latencies_ms.values())
                    fives = sum(
                        count
                        for counts in tally.statuses.values()
                        for status, count in counts.items()
                        if status == "0" or int(status) >= 500
                    )
                rss = ", ".join(f"{kb / 1024:.1f}" for kb in last["workers_kb"].values())
                log(
                    f"  t={elapsed:5.0f} s  answered {sent:6d}  5xx/no answer {fives}  worker RSS MiB [{rss}]"
                )
                next_sample += args.interval
        for _ in clients:  # the clients drain what is queued, then leave
            ticks.put(None, timeout=60)
        deadline = time.perf_counter() + 60
        for thread in clients:
            thread.join(timeout=max(0.1, deadline - time.perf_counter()))
        if any(thread.is_alive() for thread in clients):
            raise BenchError("soak: some requests had no answer within 60 s of the end")
        elapsed = time.perf_counter() - started
        samples.append(sample_memory(master, elapsed))
    finally:
        stop.set()
    return summarize(tally, samples, elapsed, args, server.errors_logged()[logged_before:])


def summarize(
    tally: Tally, samples: list[dict], elapsed: float, args: argparse.Namespace, logged: list[str]
) -> dict:
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
    total = sum(row["requests"] for row in kinds.values())
    # Memory: the first sample at or after the warm-up, and the last one, for each worker.
    warm = next((sample for sample in samples if sample["t"] >= args.warmup), samples[0])
    end = samples[-1]
    workers = {}
    for pid, start_kb in warm["workers_kb"].items():
        end_kb = end["workers_kb"].get(pid)
        workers[pid] = {
            "warm_kb": start_kb,
            "end_kb": end_kb,
            "growth_pct": round(100 * (end_kb - start_kb) / start_kb, 2) if end_kb else None,
            "peak_kb": max(sample["workers_kb"].get(pid, 0) for sample in samples),
        }
    pids_seen = sorted({pid for sample in samples for pid in sample["workers_kb"]})
    replaced = sorted(set(pids_seen) - set(samples[0]["workers_kb"]))
    return {
        "seconds": round(elapsed, 1),
        "rate_target": args.rate,
        "rate_achieved": round(total / elapsed, 1),
        "requests": total,
        "skipped_ticks": tally.skipped,
        "dispatch_lag_ms": {"p50": percentile(tally.lag_ms, 0.5), "p99": percentile(tally.lag_ms, 0.99)},
        "server_errors": sum(row["server_errors"] for row in kinds.values()),
        "no_answer": sum(row["no_answer"] for row in kinds.values()),
        "client_errors": tally.client_errors,
        "server_errors_logged": logged[:10],
        "kinds": kinds,
        "memory": {
            "warm_sample_t": warm["t"],
            "end_sample_t": end["t"],
            "workers": workers,
            "replaced_workers": replaced,
            "max_growth_pct": max(
                (row["growth_pct"] for row in workers.values() if row["growth_pct"] is not None), default=None
            ),
            "samples": samples,
        },
    }


def failures(result: dict, args: argparse.Namespace) -> list[str]:
    found = []
    if result["server_errors"] or result["no_answer"]:
        found.append(f"{result['server_errors']} 5xx and {result['no_answer']} requests without an answer")
    if result["server_errors_logged"]:
        found.append(f"the server logged errors: {result['server_errors_logged'][:3]}")
    memory = result["memory"]
    if memory["replaced_workers"]:
        found.append(f"gunicorn replaced workers during the soak: {memory['replaced_workers']}")
    if not memory["workers"] or any(row["growth_pct"] is None for row in memory["workers"].values()):
        found.append("a worker's memory could not be read at the warm-up or at the end")
    elif memory["max_growth_pct"] >= args.max_growth:
        found.append(f"worker memory grew by {memory['max_growth_pct']:.1f} % (limit {args.max_growth:g} %)")
    return found


def tables(result: dict) -> tuple[str, str]:
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
    traffic = markdown(rows, ("request", "count", "status codes", "5xx / no answer", "p50 ms", "p99 ms"))
    memory = result["memory"]
    mem_rows = [
        (
            f"worker {pid}",
            f"{row['warm_kb'] / 1024:.1f}",
            f"{row['end_kb'] / 1024:.1f}" if row["end_kb"] else "–",
            f"{row['peak_kb'] / 1024:.1f}",
            f"{row['growth_pct']:+.1f} %" if row["growth_pct"] is not None else "–",
        )
        for pid, row in memory["workers"].items()
    ]
    mem = markdown(
        mem_rows,
        (
            "process",
            f"RSS MiB at {memory['warm_sample_t']:.0f} s",
            f"RSS MiB at {memory['end_sample_t']:.0f} s",
            "peak MiB",
            "growth",
        ),
    )
    return traffic, mem


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=300, help="length of the load (default 300)")
    parser.add_argument("--rate", type=float, default=40, help="requests per second, open loop (default 40)")
    parser.add_argument("--clients", type=int, default=16, help="client threads (bounds the concurrency)")
    parser.add_argument("--warmup", type=float, default=30, help="memory growth is measured from here (s)")
    parser.add_argument("--interval", type=float, default=10, help="memory sampling interval (s)")
    parser.add_argument("--max-growth", type=float, default=10, help="worker RSS growth limit, percent")
    parser.add_argument("--events", type=int, default=10_000, help="published events in the database")
    parser.add_argument("--users", type=int, default=200, help="signed-in users (sessions made in setup)")
    parser.add_argument("--write-pool", type=int, default=300, help="events that saves and registrations use")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--sqlite", action="store_true", help="use the SQLite fallback even if PostgreSQL answers"
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rate <= 0 or args.clients < 1 or args.interval <= 0:
        parser.error("--seconds, --rate, --clients and --interval must be positive")

    lock = open(Path(tempfile.gettempdir()) / "agentready-soak.lock", "w")  # noqa: SIM115  (held until exit)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            "Another `make soak` is running on this machine; try again when it has finished.", file=sys.stderr
        )
        return 2

    started = datetime.now(UTC)
    for stop in (signal.SIGALRM, signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, on_signal)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C, also when started in the background
    signal.alarm(int(args.seconds) + 1200)  # setup, the load, and the drain, with room to spare
    workdir = Path(tempfile.mkdtemp(prefix="agentready-soak-"))
    dbs = Databases.choose(workdir, force_sqlite=args.sqlite)
    server: Server | None = None
    succeeded = False
    try:
        env = base_env(workdir)
        url = prepare(dbs, env, workdir, args)
        setup = json.loads((workdir / "sessions.json").read_text())
        server = Server("soak", env=with_db(env, url), workdir=workdir)
        server.start()
        result = soak(server, setup, args)
        succeeded = True
    except (BenchError, Stop, KeyboardInterrupt) as error:
        print(f"\nsoak failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        if server is not None:
            server.stop()
        dbs.drop_all()
        if succeeded:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"server log kept in {workdir}", file=sys.stderr)

    finished = datetime.now(UTC)
    found = failures(result, args)
    traffic, memory = tables(result)
    context = (
        f"{finished:%Y-%m-%d %H:%M} UTC · {dbs.version} · {os.cpu_count()} CPUs · gunicorn {WORKERS} sync "
        f"workers · revision {revision()} · {result['seconds']:.0f} s at {args.rate:g} req/s target, "
        f"{result['rate_achieved']:g} req/s sent"
    )
    print()
    print(context)
    print(traffic)
    print()
    print(memory)
    lag = result["dispatch_lag_ms"]
    print(
        f"- open loop: {result['skipped_ticks']} ticks skipped (all clients busy); "
        f"send lag p50 {lag['p50']} ms, p99 {lag['p99']} ms"
    )
    print(
        f"- worker memory growth from {result['memory']['warm_sample_t']:.0f} s to the end: "
        f"max {result['memory']['max_growth_pct']} % (limit < {args.max_growth:g} %)"
    )
    if dbs.vendor != "postgresql":
        banner("This soak ran on SQLITE (fallback), not PostgreSQL.")

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"soak-{started:%Y%m%dT%H%M%SZ}.json"
    record = {
        "started": started.isoformat(),
        "finished": finished.isoformat(),
        "parameters": {key: value for key, value in vars(args).items()},
        "mix": MIX,
        "database": {"vendor": dbs.vendor, "version": dbs.version},
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "server": {
            "gunicorn_workers": WORKERS,
            "worker_class": "sync",
            "debug": False,
            "conn_max_age": 60,
            "write_throttle_rate": "100000/min",
        },
        "revision": revision(),
        "table_markdown": f"{traffic}\n\n{memory}",
        "failures": found,
        "result": result,
    }
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path.relative_to(ROOT)}")
    for failure in found:
        print(f"SOAK FAILED: {failure}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
