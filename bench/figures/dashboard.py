"""The agent-readiness dashboard (`/admin/agent-readiness/`) at 1 000 000 Activity rows: SQL statements
and time per page for a signed-in staff member, in-process (bench.tasks dashboard), with the plans of
its usage statements (on the day counts). The self-check holds the counts to the rows."""

from __future__ import annotations

from bench.infra import log
from bench.session import Session
from bench.tables import verdict

NAME = "dashboard"
TARGETS = {"dashboard_queries": 6, "dashboard_ms": 300}


def measure(session: Session, url: str, profile: dict) -> dict:
    log(f"dashboard: /admin/agent-readiness/, {profile['dashboard_requests']} requests in-process")
    result = session.task(
        url,
        "dashboard",
        "--requests",
        str(profile["dashboard_requests"]),
        timeout=600,
        ALLOWED_HOSTS="127.0.0.1,testserver",
    )
    result["ok"] = (
        result["status"] == 200
        and result["sections"]
        and result["activity_shown"] == result["activity_in_window"]
        and result["refusal_rows"] > 0
    )
    log(
        f"  {result['activity']:,} activity rows, {result['queries']} queries, "
        f"median {result['median_ms']} ms (p90 {result['p90_ms']} ms)"
    )
    return result


def _size(d: dict) -> str:
    return f"{d['activity']:,} activity rows"


def rows(d: dict) -> list[tuple[str, str, str, str]]:
    return [
        (
            f"dashboard SQL queries, {_size(d)}",
            str(d["queries"]),
            f"≤ {TARGETS['dashboard_queries']}",
            verdict(d["queries"] <= TARGETS["dashboard_queries"]),
        ),
        (
            f"dashboard time per page (staff, in-process), {_size(d)}",
            f"median {d['median_ms']:.0f} ms (p90 {d['p90_ms']:.0f} ms, {d['requests']} requests)",
            f"≤ {TARGETS['dashboard_ms']} ms",
            verdict(d["median_ms"] <= TARGETS["dashboard_ms"]),
        ),
    ]


def failures(d: dict) -> list[str]:
    if d["ok"]:
        return []
    return [
        f"dashboard: status {d['status']}, sections {d['sections']}, usage shown {d['activity_shown']} vs "
        f"{d['activity_in_window']} rows in the window, {d['refusal_rows']} refusal rows"
    ]


def _label(sql: str) -> str:
    return "refusals" if '"outcome" IN' in sql else "calls per day"


def _scan(plan: str) -> str:
    """The plan's first scan node, shortened: `Seq Scan`, `Index Only Scan using …`."""
    for line in plan.splitlines():
        if "Scan" in line:
            return line.strip().lstrip("-> ").split(" on ", 1)[0].split("  (", 1)[0]
    return "?"


def notes(d: dict) -> list[str]:
    timed = ", ".join(
        f"{_label(plan['sql'])} {plan['execution_ms']:.0f} ms ({_scan(plan['plan'])})"
        for plan in d["plans"]
        if plan.get("execution_ms") is not None
    )
    line = (
        f"dashboard: {d['activity_in_window']:,} of {d['activity']:,} activity rows in its 30 days, "
        f"{d['eval_runs']} eval runs; page {d['bytes'] / 1000:.0f} kB"
    )
    if timed:
        line += f"; its usage statements on the day counts (EXPLAIN ANALYZE): {timed}"
    if d["vendor"] != "postgresql":
        line += " (SQLite fallback: a tenth of the rows, no EXPLAIN ANALYZE timing)"
    return [line]


def details(d: dict) -> str:
    """The plans of the page's usage statements (always: they read what grows with the data)."""
    parts = ["\nThe dashboard's usage statements (on the day counts) and their plans:"]
    for plan in d["plans"]:
        parts += ["", f"{_label(plan['sql'])}: {plan['sql']}", "", plan["plan"]]
    return "\n".join(parts)
