"""`make bench`: measure, print the table, write `bench/results/<UTC timestamp>.json`.

    .venv/bin/python -m bench.run            # the figures of docs/performance.md (about 10 minutes)
    .venv/bin/python -m bench.run --quick    # small data, short slices: checks that the bench works
    .venv/bin/python -m bench.run --sqlite   # force the SQLite fallback

Every figure is a ratio or a count taken in this one run, on this machine, so the machine's speed and
most of its noise cancel. The bench creates its own databases (`bench_agentready*` on the PostgreSQL
at BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres; SQLite files when that is
not reachable, with a loud note) and its own gunicorn servers on 127.0.0.1, and removes them all at
the end, also after an error, Ctrl-C or the overall time limit (bench/session.py). The figures
themselves are measured by bench/figures/, one module per group.
"""

from __future__ import annotations

import sys
from typing import Any

from bench import figures as groups
from bench import load, writes
from bench.figures import (
    browser,
    contention,
    dashboard,
    mcp,
    pages,
    payments,
    peer,
    queries,
    questions,
    scale,
    throughput,
    waitlist,
)
from bench.infra import DB_PREFIX, log
from bench.session import Session, argument_parser, update_readme
from bench.session import main as run_session
from bench.tables import markdown

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
        "browser_rounds": 15,  # the browser figures vary with frame timing: a steadier median
        "users": 2000,
        "capacity": 50,
        "rush_events": 6,  # 4 beside the search, 2 with the pages on a pool of their own
        "pool_rushes": 2,
        "rush_connections": 64,
        "visitor_rate": 10,
        "idle_s": 8.0,
        "dashboard_activity": 1_000_000,
        "dashboard_requests": 20,
        "peer_users": 6000,  # people who register once each in the MCP and peer write runs
        "peer_connections": 8,
        # The payment sweep's overdue registrations on full events with waiting lists, the bank
        # statements' rows, and the registration writes timed beside them.
        "payments": {
            "registrations": 10_000,
            "events": 100,
            "bank_small": 1_000,
            "bank_large": 10_000,
            "writes": 100,
        },
        "time_limit_s": 3000,
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
        "users": 300,
        "capacity": 10,
        "rush_events": 3,
        "pool_rushes": 1,
        "rush_connections": 64,
        "visitor_rate": 10,
        "idle_s": 3.0,
        "dashboard_activity": 1_000_000,  # the figure is about this size: quick keeps it (~20 s to fill)
        "dashboard_requests": 5,
        "peer_users": 1500,
        "peer_connections": 8,
        "payments": {
            "registrations": 2_000,
            "events": 20,
            "bank_small": 100,
            "bank_large": 1_000,
            "writes": 30,
        },
        "time_limit_s": 1500,
    },
}


def prepare(
    session: Session,
    profile: dict,
    *,
    scale: bool,
    dashboard: bool = False,
    registrations: bool = False,
    payments: bool = False,
) -> dict[str, str]:
    """Migrate a template once, clone it per data set, fill each; collect static files once. With
    `registrations` (the MCP and peer rows) the main data set also gets the peer event and its people,
    and is copied as the writes' template (bench/writes.py)."""
    dbs = session.dbs
    template = f"{DB_PREFIX}_template"
    log(f"database: {dbs.version}; migrating {template}")
    session.manage(dbs.create(template), "migrate")
    urls = {"main": dbs.create(DB_PREFIX, template=template)}
    if scale:
        urls["small"] = dbs.create(f"{DB_PREFIX}_small", template=template)
        urls["large"] = dbs.create(f"{DB_PREFIX}_large", template=template)
    if dashboard:
        urls["dashboard"] = dbs.create(f"{DB_PREFIX}_dashboard", template=template)
    if payments:  # migrated and empty: the task makes its own rows
        urls["payments"] = dbs.create(f"{DB_PREFIX}_payments", template=template)
    dbs.drop(template)
    dbs.created.remove(template)
    fills = {
        "main": [
            "--events",
            str(profile["events"]),
            "--demo",
            "--contention-file",
            str(session.workdir / "sessions.json"),
            "--users",
            str(profile["users"]),
            "--capacity",
            str(profile["capacity"]),
            "--rush-events",
            str(profile["rush_events"]),
            "--question-pages",
            *(_peer_fill(session, profile) if registrations else ()),
        ],
        "small": ["--events", str(profile["scale_small"])],
        "large": ["--events", str(profile["scale_large"])],
        # SQLite (fallback): a tenth of the activity rows, said in the figure's note.
        "dashboard": [
            "--events",
            "0",
            "--activity",
            str(profile["dashboard_activity"] // (1 if dbs.vendor == "postgresql" else 10)),
            "--eval-runs",
            "12",
        ],
    }
    for name, args in fills.items():
        if name in urls:
            session.populate(urls[name], name, *args)
    if registrations:
        dbs.create(writes.SEED, template=DB_PREFIX)  # filled and VACUUM ANALYZE'd, nobody connected
    session.manage(urls["main"], "collectstatic")
    return urls


def _peer_fill(session: Session, profile: dict) -> tuple[str, ...]:
    """The peer event (as many seats as people: every registration of a run is completed) and its people."""
    people = str(profile["peer_users"])
    setup = str(session.workdir / "peer.json")
    return ("--peer-file", setup, "--peer-users", people, "--peer-capacity", people)


def measure(session: Session, profile: dict, only: set[str]) -> dict:
    registrations = bool(only & {"mcp", "peer"})
    urls = prepare(
        session,
        profile,
        scale="scale" in only,
        dashboard="dashboard" in only,
        registrations=registrations,
        payments="payments" in only,
    )
    figures: dict[str, Any] = {}
    if "queries" in only:
        figures["queries"] = queries.measure(session, urls["main"])
    if registrations:
        log("queries per operation of the MCP and peer rows (in-process)")
        statements = session.task(
            urls["main"], "peer-queries", timeout=300, ALLOWED_HOSTS="127.0.0.1,testserver"
        )
    main = session.server("main", urls["main"])
    if only & {"throughput", "pages", "browser", "contention", "questions"}:
        main.start()
    if "throughput" in only:
        figures["throughput"] = throughput.measure(main, session.workdir, profile)
    if "pages" in only:
        figures["pages"] = pages.measure(main, session.workdir, profile)
    if "scale" in only:
        small, large = session.server("small", urls["small"]), session.server("large", urls["large"])
        small.start()
        large.start()
        try:
            figures["scale"] = scale.measure(small, large, profile)
        finally:
            small.stop()
            large.stop()
    if "browser" in only:
        figures["browser"] = browser.measure(main, profile)
    if "questions" in only:  # before the rush: the page's person is registered for neither event
        figures["questions"] = questions.measure(main, session, urls["main"], profile)
    if "contention" in only:
        figures["contention"] = contention.measure(main, session, urls["main"], profile)
    main.stop()
    if registrations:
        site = writes.WritesSite(session, session.workdir / "peer.json")
        site.reset()
        if "mcp" in only:
            figures["mcp"] = mcp.measure(site, statements, profile)
        if "peer" in only:
            figures["peer"] = peer.measure(site, session, statements, profile)
        site.server.stop()
    if "waitlist" in only:
        figures["waitlist"] = waitlist.measure(session, urls["main"])
    if "payments" in only:
        figures["payments"] = payments.measure(session, urls["payments"], profile)
    if "dashboard" in only:
        figures["dashboard"] = dashboard.measure(session, urls["dashboard"], profile)
    return figures


def report(session: Session, figures: dict, *, profile_name: str, only: set[str]) -> int:
    rows = groups.table_rows(figures)
    summary = markdown(rows, ("figure", "measured", "target", "verdict"))
    notes = groups.notes(figures)
    failures = groups.self_check_failures(figures)
    context = session.context(f"profile {profile_name}")
    print()
    print(context)
    print(summary)
    for note in notes:
        print(f"- {note}")
    for text in groups.details(figures):
        print(text)
    session.sqlite_note("These figures were taken on SQLITE (fallback), not PostgreSQL.")
    if profile_name != "full":
        print("\nQuick profile: smaller data and shorter slices; not the figures of docs/performance.md.")
    session.write_result(
        {"profile": profile_name, "parameters": PROFILES[profile_name]},
        {
            "targets": groups.TARGETS,
            "table": [
                dict(zip(("figure", "measured", "target", "verdict"), row, strict=True)) for row in rows
            ],
            "table_markdown": summary,
            "notes": notes,
            "self_check_failures": failures,
            "figures": figures,
        },
    )
    if profile_name == "full" and only == set(groups.FIGURES):
        update_readme("\n".join([context, "", summary, "", *(f"- {note}" for note in notes)]))
    for failure in failures:
        print(f"SELF-CHECK FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    parser = argument_parser("python -m bench.run", __doc__)
    parser.add_argument("--quick", action="store_true", help="small data and short slices (checks the bench)")
    parser.add_argument(
        "--only",
        default=",".join(groups.FIGURES),
        help=f"comma-separated subset of {','.join(groups.FIGURES)}",
    )
    args = parser.parse_args(argv)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    if only - set(groups.FIGURES):
        parser.error(f"unknown figure(s): {', '.join(sorted(only - set(groups.FIGURES)))}")
    profile_name = "quick" if args.quick else "full"
    profile = PROFILES[profile_name]
    load.require_wrk()
    return run_session(
        "bench",
        lambda session: measure(session, profile, only),
        lambda session, figures: report(session, figures, profile_name=profile_name, only=only),
        force_sqlite=args.sqlite,
        time_limit_s=profile["time_limit_s"],
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
