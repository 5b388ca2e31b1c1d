"""SQL queries per request, counted in-process (bench.tasks queries), for few and for many rows."""

from __future__ import annotations

from bench.infra import log
from bench.session import Session
from bench.tables import markdown, verdict

NAME = "queries"
#: A write's seventh statement is its Activity row, inserted in its own transaction (the audit trail).
TARGETS = {"queries": 6, "write queries": 7}
WRITES = {"API save_event", "API unsave_event", "API register_event", "API cancel_registration"}


def measure(session: Session, url: str) -> dict:
    log("queries per request (in-process, CaptureQueriesContext)")
    data = session.task(url, "queries", timeout=300, ALLOWED_HOSTS="127.0.0.1,testserver")
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
        "over_target": sorted(name for name, row in rows.items() if row["max"] > _target(name)),
    }


def _target(name: str) -> int:
    return TARGETS["write queries" if name in WRITES else "queries"]


def rows(q: dict) -> list[tuple[str, str, str, str]]:
    found = []
    for label, group in (
        ("SQL queries per page, read API call, manifest", False),
        ("SQL queries per write API call", True),
    ):
        selected = [row for name, row in q["rows"].items() if (name in WRITES) == group]
        counts = [row["max"] for row in selected]
        constant = all(row["constant"] for row in selected)
        spread = f"{min(counts)}–{max(counts)}" if min(counts) != max(counts) else str(max(counts))
        target = TARGETS["write queries" if group else "queries"]
        found.append(
            (
                label,
                f"{spread}, {'constant' if constant else 'NOT constant'} in N",
                f"constant, ≤ {target}",
                verdict(max(counts) <= target and constant),
            )
        )
    return found


def failures(q: dict) -> list[str]:
    return [] if q["constant"] else ["queries: a count changes with N (a query per row)"]


def details(q: dict) -> str:
    columns = [f"{kind} {size}" for kind in ("no cookie", "session", "signed-in") for size in ("few", "many")]
    table = []
    for name, row in q["rows"].items():
        cells = [str(row["counts"].get(column, "–")) for column in columns]
        table.append((name, *cells, "yes" if row["constant"] else "NO"))
    return "\nSQL queries per request (transaction control not counted; N = few or many rows):\n" + markdown(
        table, ("request", *columns, "constant")
    )
