"""`make bench`: measure, print the table, write `bench/results/<UTC timestamp>.json`.

    .venv/bin/python -m bench.run            # the figures of the README (about 5 minutes)
    .venv/bin/python -m bench.run --quick    # small data, short slices: checks that the bench works
    .venv/bin/python -m bench.run --sqlite   # force the SQLite fallback

Every figure is a ratio or a count taken in this one run, on this machine, so the machine's speed and
most of its noise cancel. The bench creates its own databases (`bench_agentready*` on the PostgreSQL
at BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres; SQLite files when that is
not reachable, with a loud note) and its own gunicorn servers on 127.0.0.1, and removes them all at
the end, also after an error, Ctrl-C or the overall time limit.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import browser, load
from bench.infra import (
    DB_PREFIX,
    HERMETIC_UNSET,
    PYTHON,
    ROOT,
    WORKERS,
    BenchError,
    Databases,
    Server,
    banner,
    http_get,
    last_json_line,
    log,
    run,
)

RESULTS = ROOT / "bench" / "results"
# Where the latest table goes: between the markers of each (bench/README.md, the README's Performance).
READMES = (ROOT / "bench" / "README.md", ROOT / "README.md")
TABLE_START, TABLE_END = "<!-- bench:table:start -->", "<!-- bench:table:end -->"
SEARCH_PATH = "/api/events?location=taipei&price=free&level=beginner"
BARE_PATH = "/bench/bare"
# Searches whose scaling is reported for information (no target): no condition at all, and a keyword.
OTHER_SEARCHES = {"no condition": "/api/events", "keyword": "/api/events?query=Django"}
CONTENTION_PATH = "/api/events/{event}/registration"

PROFILES: dict[str, dict[str, Any]] = {
    "full": {
        "events": 10_000,
        "scale_small": 1_000,
        "scale_large": 100_000,
        "connections": 32,
        "rounds": 5,
        "slice_s": 4.0,
        "warmup_s": 2.0,
        "scale_rounds": 5,
        "scale_slice_s": 3.0,
        "browser_rounds": 5,
        "users": 500,
        "capacity": 50,
        "time_limit_s": 1800,
    },
    "quick": {
        "events": 2_000,
        "scale_small": 200,
        "scale_large": 5_000,
        "connections": 32,
        "rounds": 2,
        "slice_s": 2.0,
        "warmup_s": 1.0,
        "scale_rounds": 2,
        "scale_slice_s": 2.0,
        "browser_rounds": 2,
        "users": 100,
        "capacity": 10,
        "time_limit_s": 900,
    },
}

TARGETS = {
    "throughput_ratio": 0.6,
    "p99_ms": 50.0,
    "scale_ratio": 2.0,
    "queries": 6,
    "speedup": 3.0,
    "fewer_bytes": 5.0,
    "tools_ms": 50.0,
    "page_kb": 100.0,
}


class TimeLimit(Exception):
    """The overall time limit passed, or the bench was asked to stop: clean up and leave."""


def on_alarm(signum: int, frame: object) -> None:
    reason = "ran past its time limit" if signum == signal.SIGALRM else f"got {signal.Signals(signum).name}"
    raise TimeLimit(f"the bench {reason}")


# ---- environment -------------------------------------------------------------------------------


def base_env(workdir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in HERMETIC_UNSET}
    env.update(
        DJANGO_SETTINGS_MODULE="bench.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        DB_CONN_MAX_AGE="60",
        WRITE_THROTTLE_RATE="100000/min",
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        LOG_LEVEL="ERROR",
        BENCH_STATIC_ROOT=str(workdir / "static"),
        BENCH_BARE_BODY=str(workdir / "bare.json"),
        PYTHONUNBUFFERED="1",
    )
    return env


def with_db(env: dict[str, str], url: str, **extra: str) -> dict[str, str]:
    return {**env, "DATABASE_URL": url, **extra}


def task(env: dict[str, str], *args: str, timeout: float) -> dict:
    what = f"bench.tasks {' '.join(args)}"
    return last_json_line(
        run([PYTHON, "-m", "bench.tasks", *args], env=env, timeout=timeout, what=what), what
    )


# ---- steps -------------------------------------------------------------------------------------


def prepare(
    dbs: Databases, env: dict[str, str], profile: dict, workdir: Path, *, scale: bool
) -> dict[str, str]:
    """Migrate a template once, clone it per data set, fill each; collect static files once."""
    template = f"{DB_PREFIX}_template"
    log(f"database: {dbs.version}; migrating {template}")
    url = dbs.create(template)
    run(
        [PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"],
        env=with_db(env, url),
        timeout=300,
        what="migrate",
    )
    urls = {"main": dbs.create(DB_PREFIX, template=template)}
    if scale:
        urls["small"] = dbs.create(f"{DB_PREFIX}_small", template=template)
        urls["large"] = dbs.create(f"{DB_PREFIX}_large", template=template)
    dbs.drop(template)
    dbs.created.remove(template)
    fills = {
        "main": [
            "--events",
            str(profile["events"]),
            "--demo",
            "--contention-file",
            str(workdir / "sessions.json"),
            "--users",
            str(profile["users"]),
            "--capacity",
            str(profile["capacity"]),
        ],
        "small": ["--events", str(profile["scale_small"])],
        "large": ["--events", str(profile["scale_large"])],
    }
    for name, args in fills.items():
        if name not in urls:
            continue
        started = time.monotonic()
        filled = task(with_db(env, urls[name]), "populate", *args, timeout=900)
        log(f"filled {name}: {filled['events']} events in {time.monotonic() - started:.0f} s")
    run(
        [PYTHON, "manage.py", "collectstatic", "--no-input", "-v", "0"],
        env=with_db(env, urls["main"]),
        timeout=300,
        what="collectstatic",
    )
    return urls


def measure_queries(env: dict[str, str], url: str) -> dict:
    log("queries per request (in-process, CaptureQueriesContext)")
    data = task(with_db(env, url, ALLOWED_HOSTS="127.0.0.1,testserver"), "queries", timeout=300)
    rows = {}
    for name, counts in data["rows"].items():
        kinds = {column.rsplit(" ", 1)[0] for column in counts}
        constant = all(counts.get(f"{kind} few") == counts.get(f"{kind} many") for kind in kinds)
        rows[name] = {
            "max": max(counts.values()),
            "constant": constant,
            "counts": counts,
            "transaction_control": data["transaction_control"][name],
        }
    worst = max(row["max"] for row in rows.values())
    return {
        "rows": rows,
        "max": worst,
        "constant": all(row["constant"] for row in rows.values()),
        "over_target": sorted(name for name, row in rows.items() if row["max"] > TARGETS["queries"]),
    }


def measure_throughput(server: Server, workdir: Path, profile: dict) -> dict:
    log(f"API search vs bare view, {profile['connections']} connections, alternating slices")
    status, body = http_get(server.base_url + SEARCH_PATH)
    payload = json.loads(body) if status == 200 else {}
    if status != 200 or payload.get("ok") is not True or payload.get("count") != 10:
        raise BenchError(f"the search did not answer a full page ({status}): {body[:300]!r}")
    (workdir / "bare.json").write_bytes(body)
    logged_before = len(server.errors_logged())
    bare_status, bare = http_get(server.base_url + BARE_PATH)
    if bare_status != 200 or bare != body:
        raise BenchError(
            f"the bare view does not return the API's {len(body)} bytes ({bare_status}, {len(bare)})"
        )
    slices = load.alternate(
        {"api": server.base_url + SEARCH_PATH, "bare": server.base_url + BARE_PATH},
        rounds=profile["rounds"],
        seconds=profile["slice_s"],
        connections=profile["connections"],
        threads=2,
        warmup=profile["warmup_s"],
    )
    api, bare_side = load.summarize(slices["api"]), load.summarize(slices["bare"])
    return {
        "path": SEARCH_PATH,
        "body_bytes": len(body),
        "total_matching": payload["total"],
        "connections": profile["connections"],
        "api": api,
        "bare": bare_side,
        "ratio": round(api["rate"] / bare_side["rate"], 3),
        "p99_ms": api["p99_ms"],
        "errors": api["errors"] + bare_side["errors"] + len(server.errors_logged()[logged_before:]),
        "server_errors_logged": server.errors_logged()[logged_before:][:10],
    }


def measure_scale(small: Server, large: Server, profile: dict) -> dict:
    log(f"search latency, {profile['scale_large']} vs {profile['scale_small']} events, 1 connection")
    totals = {}
    for name, server in (("small", small), ("large", large)):
        status, body = http_get(server.base_url + SEARCH_PATH)
        payload = json.loads(body) if status == 200 else {}
        if status != 200 or payload.get("count") != 10:
            raise BenchError(f"the {name} server did not answer the search ({status}): {body[:300]!r}")
        totals[name] = payload["total"]
    expected = profile["scale_large"] / profile["scale_small"]
    if totals["large"] < 0.9 * expected * totals["small"]:
        raise BenchError(f"the data sets are not {expected:.0f}× apart: {totals}")
    slices = load.alternate(
        {"small": small.base_url + SEARCH_PATH, "large": large.base_url + SEARCH_PATH},
        rounds=profile["scale_rounds"],
        seconds=profile["scale_slice_s"],
        connections=1,
        threads=1,
        warmup=profile["warmup_s"],
    )
    sides = {name: load.summarize(items) for name, items in slices.items()}
    other_searches = {}
    for label, path in OTHER_SEARCHES.items():
        log(f"  (not a target) {label}: {path}")
        extra = load.alternate(
            {"small": small.base_url + path, "large": large.base_url + path},
            rounds=max(1, profile["scale_rounds"] // 2),
            seconds=profile["scale_slice_s"],
            connections=1,
            threads=1,
            warmup=1,
        )
        measured = {name: load.summarize(items) for name, items in extra.items()}
        other_searches[label] = {
            "path": path,
            "small_p50_ms": measured["small"]["p50_ms"],
            "large_p50_ms": measured["large"]["p50_ms"],
            "ratio": round(measured["large"]["p50_ms"] / measured["small"]["p50_ms"], 3),
        }
    return {
        "path": SEARCH_PATH,
        "events": {"small": profile["scale_small"], "large": profile["scale_large"]},
        "matching": totals,
        "small": sides["small"],
        "large": sides["large"],
        "ratio": round(sides["large"]["p50_ms"] / sides["small"]["p50_ms"], 3),
        "mean_ratio": round(sides["large"]["mean_ms"] / sides["small"]["mean_ms"], 3),
        "errors": sides["small"]["errors"] + sides["large"]["errors"],
        "other_searches": other_searches,
    }


def measure_browser(server: Server, profile: dict) -> dict:
    log("Chromium (WebMCP): tool path vs UI path, tool availability, bytes of /events/")
    return browser.run_all(server.base_url, rounds=profile["browser_rounds"])


def measure_contention(server: Server, env: dict[str, str], url: str, workdir: Path) -> dict:
    setup = json.loads((workdir / "sessions.json").read_text())
    sessions = setup["sessions"]
    log(f"contention: {len(sessions)} concurrent registrations for {setup['capacity']} seats")
    port = int(server.base_url.rsplit(":", 1)[1])
    logged_before = len(server.errors_logged())
    answered = load.rush(
        port=port,
        path=CONTENTION_PATH.format(event=setup["event"]),
        sessions=sessions,
        session_cookie=setup["session_cookie"],
        csrf_cookie=setup["csrf_cookie"],
    )
    stored = task(with_db(env, url), "contention-check", "--event", setup["event"], timeout=120)
    statuses = answered["statuses"]
    created = statuses.get("201", 0)
    server_errors = sum(count for status, count in statuses.items() if int(status) == 0 or int(status) >= 500)
    result = {
        **answered,
        "capacity": setup["capacity"],
        "created": created,
        "confirmed": stored["confirmed"],
        "oversold": max(0, stored["confirmed"] - setup["capacity"]),
        "server_errors": server_errors,
        "event_full": answered["reasons"].get("EVENT_FULL", 0),
        "stored": stored,
        "server_errors_logged": server.errors_logged()[logged_before:][:10],
    }
    result["ok"] = (
        stored["confirmed"] == setup["capacity"] == created
        and stored["rows"] == setup["capacity"]
        and server_errors == 0
        and not result["server_errors_logged"]
        and result["event_full"] == len(sessions) - setup["capacity"]
    )
    log(
        f"  {created} created, {stored['confirmed']} confirmed, {result['event_full']} EVENT_FULL, "
        f"{server_errors} 5xx, {answered['attempts_per_s']} attempts/s"
    )
    return result


# ---- the table -----------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "✅" if ok else "❌ miss"


def table_rows(figures: dict) -> list[tuple[str, str, str, str]]:
    rows = []
    t = figures.get("throughput")
    if t:
        rows.append(
            (
                "API search throughput ÷ bare view",
                f"{t['ratio']:.2f} ({t['api']['rate']:.0f} vs {t['bare']['rate']:.0f} req/s)",
                f"≥ {TARGETS['throughput_ratio']}",
                verdict(t["ratio"] >= TARGETS["throughput_ratio"] and t["errors"] == 0),
            )
        )
        rows.append(
            (
                f"API search p99 at {t['connections']} connections",
                f"{t['p99_ms']:.0f} ms (bare view {t['bare']['p99_ms']:.0f} ms)",
                f"≤ {TARGETS['p99_ms']:.0f} ms",
                verdict(t["p99_ms"] <= TARGETS["p99_ms"] and t["errors"] == 0),
            )
        )
    s = figures.get("scale")
    if s:
        rows.append(
            (
                f"search latency, {s['events']['large']:,} ÷ {s['events']['small']:,} events",
                f"{s['ratio']:.2f} (p50 {s['large']['p50_ms']:.1f} vs {s['small']['p50_ms']:.1f} ms)",
                f"≤ {TARGETS['scale_ratio']:.0f}",
                verdict(s["ratio"] <= TARGETS["scale_ratio"] and s["errors"] == 0),
            )
        )
    q = figures.get("queries")
    if q:
        for label, group in (
            ("SQL queries per page, read API call, manifest", False),
            ("SQL queries per write API call", True),
        ):
            selected = [row for name, row in q["rows"].items() if (name in WRITES) == group]
            counts = [row["max"] for row in selected]
            constant = all(row["constant"] for row in selected)
            spread = f"{min(counts)}–{max(counts)}" if min(counts) != max(counts) else str(max(counts))
            rows.append(
                (
                    label,
                    f"{spread}, {'constant' if constant else 'NOT constant'} in N",
                    f"constant, ≤ {TARGETS['queries']}",
                    verdict(max(counts) <= TARGETS["queries"] and constant),
                )
            )
    b = figures.get("browser")
    if b:
        tv, av = b["tool_vs_ui"], b["availability"]
        rows.append(
            (
                "tool path vs UI path: time",
                f"{tv['speedup']:.1f}× faster ({tv['tool_ms']:.0f} vs {tv['person_ms']:.0f} ms)",
                f"≥ {TARGETS['speedup']:.0f}×",
                verdict(tv["speedup"] >= TARGETS["speedup"]),
            )
        )
        requests = tv["tool_requests_per_call"]
        rows.append(
            (
                "requests per tool call (same origin, not static)",
                f"{'–'.join(map(str, requests)) if len(requests) > 1 else requests[0]} "
                f"({', '.join(tv['tool_requests'])})",
                "1",
                verdict(requests == [1]),
            )
        )
        rows.append(
            (
                "tool path vs UI path: bytes to read",
                f"{tv['fewer_bytes']:.1f}× fewer ({tv['tool_bytes'] / 1000:.1f} vs "
                f"{tv['person_text_bytes'] / 1000:.1f} kB of page text)",
                f"≥ {TARGETS['fewer_bytes']:.0f}×",
                verdict(tv["fewer_bytes"] >= TARGETS["fewer_bytes"]),
            )
        )
        rows.append(
            (
                "tools registered after DOMContentLoaded",
                f"{av['after_dcl_ms']:.0f} ms ({len(av['tools'])} tools)",
                f"≤ {TARGETS['tools_ms']:.0f} ms",
                verdict(av["after_dcl_ms"] <= TARGETS["tools_ms"]),
            )
        )
        rows.append(
            (
                "/events/ transferred, third-party requests",
                f"{av['bytes'] / 1000:.1f} kB in {av['requests']} requests, "
                f"{av['third_party_requests']} third-party",
                f"≤ {TARGETS['page_kb']:.0f} kB, 0",
                verdict(av["bytes"] / 1000 <= TARGETS["page_kb"] and av["third_party_requests"] == 0),
            )
        )
    c = figures.get("contention")
    if c:
        rows.append(
            (
                f"{c['attempts']} concurrent registrations, {c['capacity']} seats",
                f"{c['confirmed']} confirmed, {c['oversold']} oversold, {c['server_errors']} 5xx; "
                f"{c['attempts_per_s']:.0f} attempts/s",
                f"exactly {c['capacity']}, 0, 0",
                verdict(c["ok"]),
            )
        )
    return rows


def self_check_failures(figures: dict) -> list[str]:
    """Failures of correctness, not of speed: these make `make bench` exit non-zero."""
    failures = []
    for name in ("throughput", "scale"):
        if figures.get(name, {}).get("errors"):
            failures.append(f"{name}: {figures[name]['errors']} failed requests or server errors")
    if "queries" in figures and not figures["queries"]["constant"]:
        failures.append("queries: a count changes with N (a query per row)")
    tool = figures.get("browser", {}).get("tool_vs_ui")
    if tool and tool["tool_requests_per_call"] != [1]:
        failures.append(
            f"browser: a search_events call made {tool['tool_requests_per_call']} requests, not exactly 1 "
            f"(first run: {tool['tool_requests']})"
        )
    contention = figures.get("contention")
    if contention and not contention["ok"]:
        failures.append(
            f"contention: {contention['confirmed']} confirmed for {contention['capacity']} seats, "
            f"{contention['server_errors']} 5xx, statuses {contention['statuses']}"
        )
    return failures


def notes(figures: dict) -> list[str]:
    """Measurements that explain a figure (printed under the table, kept in the JSON)."""
    lines = []
    tv = figures.get("browser", {}).get("tool_vs_ui")
    split = (tv or {}).get("tool_split_ms", {})
    if tv and split.get("in_page_ms") is not None:

        def ms(value: float | None) -> str:
            return "?" if value is None else f"{value:.0f}"

        server = ""
        if split.get("server_ms") is not None:
            server = f" (server {ms(split['server_ms'])} ms"
            if tv.get("person_server_ms") is not None:
                server += f"; the person's search request: {ms(tv['person_server_ms'])} ms"
            server += ")"
        lines.append(
            f"tool call of {ms(tv['tool_ms'])} ms (medians): in the page {ms(split['in_page_ms'])} ms, "
            f"of which its one request {ms(split['request_ms'])} ms to the response headers{server}, "
            f"the body {ms(split['body_ms'])} ms, parsing the answer {ms(split.get('parse_ms'))} ms and "
            f"swapping the region in {ms(split.get('swap_ms'))} ms, settling {ms(split['settle_ms'])} ms, "
            f"after the swap {ms(split['after_swap_ms'])} ms; outside the page {ms(split['outside_ms'])} ms "
            f"(Playwright and DevTools both ways, and the first frame with the new region, drawn "
            f"{ms(split.get('painted_after_return_ms'))} ms after the page answered; a no-op tool called "
            f"the same way takes {ms(tv.get('noop_tool_ms'))} ms in all)"
        )
    if tv:
        aria, html, tool = tv["person_aria_snapshot_bytes"], tv["person_html_bytes"], tv["tool_bytes"]
        lines.append(
            f"page as an agent may read it: text {tv['person_text_bytes'] / 1000:.1f} kB, accessibility "
            f"snapshot {aria / 1000:.1f} kB ({aria / tool:.1f}× the tool's JSON), HTML {html / 1000:.1f} kB "
            f"({html / tool:.1f}×); page language {tv['page_language']!r}"
        )
    return lines


WRITES = {"API save_event", "API unsave_event", "API register_event", "API cancel_registration"}


def markdown(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    line = lambda row: "| " + " | ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)) + " |"  # noqa: E731
    return "\n".join(
        [line(header), "|" + "|".join("-" * (width + 2) for width in widths) + "|", *map(line, rows)]
    )


def queries_table(q: dict) -> str:
    columns = [f"{kind} {size}" for kind in ("no cookie", "session", "signed-in") for size in ("few", "many")]
    rows = []
    for name, row in q["rows"].items():
        cells = [str(row["counts"].get(column, "–")) for column in columns]
        rows.append((name, *cells, "yes" if row["constant"] else "NO"))
    return markdown(rows, ("request", *columns, "constant"))


def revision() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{'+dirty' if dirty else ''}" if head else "unknown"


def update_readme(text: str) -> None:
    """Replace the text between the markers and nothing else (others may be editing the rest)."""
    for readme in READMES:
        if not readme.exists():
            continue
        content = readme.read_text()
        if TABLE_START not in content or TABLE_END not in content:
            continue
        before, rest = content.split(TABLE_START, 1)
        _, after = rest.split(TABLE_END, 1)
        readme.write_text(f"{before}{TABLE_START}\n{text}\n{TABLE_END}{after}")


# ---- main --------------------------------------------------------------------------------------


def measure(dbs: Databases, profile: dict, workdir: Path, servers: list[Server], only: set[str]) -> dict:
    env = base_env(workdir)
    urls = prepare(dbs, env, profile, workdir, scale="scale" in only)
    figures: dict[str, Any] = {}
    if "queries" in only:
        figures["queries"] = measure_queries(env, urls["main"])
    main = Server("main", env=with_db(env, urls["main"]), workdir=workdir)
    servers.append(main)
    if only & {"throughput", "browser", "contention"}:
        main.start()
    if "throughput" in only:
        figures["throughput"] = measure_throughput(main, workdir, profile)
    if "scale" in only:
        small = Server("small", env=with_db(env, urls["small"]), workdir=workdir)
        large = Server("large", env=with_db(env, urls["large"]), workdir=workdir)
        servers.extend([small, large])
        small.start()
        large.start()
        try:
            figures["scale"] = measure_scale(small, large, profile)
        finally:
            small.stop()
            large.stop()
    if "browser" in only:
        figures["browser"] = measure_browser(main, profile)
    if "contention" in only:
        figures["contention"] = measure_contention(main, env, urls["main"], workdir)
    main.stop()
    return figures


FIGURES = ("queries", "throughput", "scale", "browser", "contention")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small data and short slices (checks the bench)")
    parser.add_argument(
        "--sqlite", action="store_true", help="use the SQLite fallback even if PostgreSQL answers"
    )
    parser.add_argument(
        "--only", default=",".join(FIGURES), help=f"comma-separated subset of {','.join(FIGURES)}"
    )
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    if only - set(FIGURES):
        parser.error(f"unknown figure(s): {', '.join(sorted(only - set(FIGURES)))}")
    profile_name = "quick" if args.quick else "full"
    profile = PROFILES[profile_name]
    load.require_wrk()

    lock = open(Path(tempfile.gettempdir()) / "agentready-bench.lock", "w")  # noqa: SIM115  (held until exit)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(
            "Another `make bench` is running on this machine; try again when it has finished.",
            file=sys.stderr,
        )
        return 2

    started = datetime.now(UTC)
    signal.signal(signal.SIGALRM, on_alarm)
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, on_alarm)
    signal.alarm(profile["time_limit_s"])
    workdir = Path(tempfile.mkdtemp(prefix="agentready-bench-"))
    dbs = Databases.choose(workdir, force_sqlite=args.sqlite)
    servers: list[Server] = []
    succeeded = False
    try:
        figures = measure(dbs, profile, workdir, servers, only)
        succeeded = True
    except (BenchError, TimeLimit, KeyboardInterrupt) as error:
        print(f"\nbench failed: {error}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        for server in servers:
            server.stop()
        dbs.drop_all()
        if succeeded:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"server logs kept in {workdir}", file=sys.stderr)

    finished = datetime.now(UTC)
    rows = table_rows(figures)
    summary = markdown(rows, ("figure", "measured", "target", "verdict"))
    context = (
        f"{finished:%Y-%m-%d %H:%M} UTC · {dbs.version} · {os.cpu_count()} CPUs · gunicorn {WORKERS} sync "
        f"workers · revision {revision()} · profile {profile_name}"
    )
    print()
    print(context)
    print(summary)
    for note in notes(figures):
        print(f"- {note}")
    if figures.get("scale", {}).get("other_searches"):
        print("\nScaling of other searches (information, no target):")
        print(
            markdown(
                [
                    (
                        label,
                        row["path"],
                        f"{row['large_p50_ms']:.1f} ms",
                        f"{row['small_p50_ms']:.1f} ms",
                        f"{row['ratio']:.2f}",
                    )
                    for label, row in figures["scale"]["other_searches"].items()
                ],
                ("search", "path", "p50, large", "p50, small", "ratio"),
            )
        )
    if "queries" in figures:
        print("\nSQL queries per request (transaction control not counted; N = few or many rows):")
        print(queries_table(figures["queries"]))
    if dbs.vendor != "postgresql":
        banner("These figures were taken on SQLITE (fallback), not PostgreSQL.")
    if profile_name != "full":
        print("\nQuick profile: smaller data and shorter slices; not the README's figures.")

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{started:%Y%m%dT%H%M%SZ}.json"
    record = {
        "started": started.isoformat(),
        "finished": finished.isoformat(),
        "profile": profile_name,
        "parameters": profile,
        "database": {"vendor": dbs.vendor, "version": dbs.version},
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "server": {"gunicorn_workers": WORKERS, "worker_class": "sync", "debug": False, "conn_max_age": 60},
        "revision": revision(),
        "targets": TARGETS,
        "table": [dict(zip(("figure", "measured", "target", "verdict"), row, strict=True)) for row in rows],
        "table_markdown": summary,
        "notes": notes(figures),
        "self_check_failures": self_check_failures(figures),
        "figures": figures,
    }
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path.relative_to(ROOT)}")
    if profile_name == "full" and only == set(FIGURES):
        update_readme("\n".join([context, "", summary, "", *(f"- {note}" for note in notes(figures))]))
    failures = self_check_failures(figures)
    for failure in failures:
        print(f"SELF-CHECK FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
