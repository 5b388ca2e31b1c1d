"""Concurrent registrations: one POST per signed-in user for the last seats, released together."""

from __future__ import annotations

import json

from bench import load
from bench.infra import Server, log
from bench.session import Session
from bench.tables import verdict

NAME = "contention"
TARGETS: dict[str, float] = {}
CONTENTION_PATH = "/api/events/{event}/registration"


def measure(server: Server, session: Session, url: str) -> dict:
    setup = json.loads((session.workdir / "sessions.json").read_text())
    sessions = setup["sessions"]
    log(f"contention: {len(sessions)} concurrent registrations for {setup['capacity']} seats")
    logged_before = len(server.errors_logged())
    answered = load.rush(
        port=server.port,
        path=CONTENTION_PATH.format(event=setup["event"]),
        sessions=sessions,
        session_cookie=setup["session_cookie"],
        csrf_cookie=setup["csrf_cookie"],
    )
    stored = session.task(url, "contention-check", "--event", setup["event"], timeout=120)
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


def rows(c: dict) -> list[tuple[str, str, str, str]]:
    return [
        (
            f"{c['attempts']} concurrent registrations, {c['capacity']} seats",
            f"{c['confirmed']} confirmed, {c['oversold']} oversold, {c['server_errors']} 5xx; "
            f"{c['attempts_per_s']:.0f} attempts/s",
            f"exactly {c['capacity']}, 0, 0",
            verdict(c["ok"]),
        )
    ]


def failures(c: dict) -> list[str]:
    if c["ok"]:
        return []
    return [
        f"contention: {c['confirmed']} confirmed for {c['capacity']} seats, "
        f"{c['server_errors']} 5xx, statuses {c['statuses']}"
    ]
