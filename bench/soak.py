"""`make soak`: steady mixed traffic for minutes; no 5xx, and no worker whose memory keeps growing.

    .venv/bin/python -m bench.soak                          # 300 s at 40 req/s (docs/performance.md)
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

The run is a bench session (bench/session.py: lock, time limit, database, server, result file); the
traffic is bench/traffic.py, the memory samples bench/memory.py.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time

from bench import memory, traffic
from bench.infra import DB_PREFIX, BenchError, Server, log
from bench.session import Session, argument_parser
from bench.session import main as run_session

DB_NAME = f"{DB_PREFIX}_soak"  # not the bench's names: a soak and a `make bench` may run side by side


def prepare(session: Session, args: argparse.Namespace) -> str:
    dbs = session.dbs
    log(f"database: {dbs.version}; creating {DB_NAME}")
    url = dbs.create(DB_NAME)
    session.manage(url, "migrate")
    session.populate(
        url,
        f"soak ({args.users} signed-in users)",
        "--events",
        str(args.events),
        "--demo",
        "--contention-file",
        str(session.workdir / "sessions.json"),
        "--users",
        str(args.users),
    )
    session.manage(url, "collectstatic")
    return url


def measure(session: Session, args: argparse.Namespace) -> dict:
    url = prepare(session, args)
    setup = json.loads((session.workdir / "sessions.json").read_text())
    server = session.server("soak", url)
    server.start()
    return soak(server, setup, args)


def soak(server: Server, setup: dict, args: argparse.Namespace) -> dict:
    assert server.process is not None
    master = server.process.pid
    port = server.port
    mix = traffic.Traffic(setup, events=args.events, write_pool=args.write_pool, seed=args.seed)
    tally = traffic.Tally()
    stop = threading.Event()
    ticks: queue.Queue = queue.Queue(maxsize=max(1, int(args.rate * 2)))
    clients = [
        threading.Thread(
            target=traffic.client, args=(port, mix, ticks, tally, stop), daemon=True, name=f"soak-{n}"
        )
        for n in range(args.clients)
    ]
    dispatcher = threading.Thread(
        target=traffic.dispatch,
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
        samples.append(memory.sample_memory(master, 0.0))
        next_sample = args.interval
        while dispatcher.is_alive() and time.perf_counter() - started < args.seconds + 60:
            dispatcher.join(timeout=max(0.0, min(1.0, started + next_sample - time.perf_counter())))
            elapsed = time.perf_counter() - started
            if elapsed >= next_sample and elapsed < args.seconds:
                samples.append(memory.sample_memory(master, elapsed))
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
        samples.append(memory.sample_memory(master, elapsed))
    finally:
        stop.set()
    return summarize(tally, samples, elapsed, args, server.errors_logged()[logged_before:])


def summarize(
    tally: traffic.Tally, samples: list[dict], elapsed: float, args: argparse.Namespace, logged: list[str]
) -> dict:
    kinds = traffic.summarize(tally)
    total = sum(row["requests"] for row in kinds.values())
    return {
        "seconds": round(elapsed, 1),
        "rate_target": args.rate,
        "rate_achieved": round(total / elapsed, 1),
        "requests": total,
        "skipped_ticks": tally.skipped,
        "dispatch_lag_ms": {
            "p50": traffic.percentile(tally.lag_ms, 0.5),
            "p99": traffic.percentile(tally.lag_ms, 0.99),
        },
        "server_errors": sum(row["server_errors"] for row in kinds.values()),
        "no_answer": sum(row["no_answer"] for row in kinds.values()),
        "client_errors": tally.client_errors,
        "server_errors_logged": logged[:10],
        "kinds": kinds,
        "memory": memory.summarize(samples, args.warmup),
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


def report(session: Session, result: dict, args: argparse.Namespace) -> int:
    found = failures(result, args)
    traffic_table, memory_table = traffic.table(result), memory.table(result["memory"])
    context = session.context(
        f"{result['seconds']:.0f} s at {args.rate:g} req/s target, {result['rate_achieved']:g} req/s sent"
    )
    print()
    print(context)
    print(traffic_table)
    print()
    print(memory_table)
    lag = result["dispatch_lag_ms"]
    print(
        f"- open loop: {result['skipped_ticks']} ticks skipped (all clients busy); "
        f"send lag p50 {lag['p50']} ms, p99 {lag['p99']} ms"
    )
    print(
        f"- worker memory growth from {result['memory']['warm_sample_t']:.0f} s to the end: "
        f"max {result['memory']['max_growth_pct']} % (limit < {args.max_growth:g} %)"
    )
    session.sqlite_note("This soak ran on SQLITE (fallback), not PostgreSQL.")
    session.write_result(
        {"parameters": dict(vars(args)), "mix": traffic.MIX},
        {"table_markdown": f"{traffic_table}\n\n{memory_table}", "failures": found, "result": result},
        prefix="soak-",
    )
    for failure in found:
        print(f"SOAK FAILED: {failure}", file=sys.stderr)
    return 1 if found else 0


def main(argv: list[str]) -> int:
    parser = argument_parser("python -m bench.soak", __doc__)
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
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.rate <= 0 or args.clients < 1 or args.interval <= 0:
        parser.error("--seconds, --rate, --clients and --interval must be positive")
    return run_session(
        "soak",
        lambda session: measure(session, args),
        lambda session, result: report(session, result, args),
        force_sqlite=args.sqlite,
        time_limit_s=int(args.seconds) + 1200,  # setup, the load, and the drain, with room to spare
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
