"""The waiting list under a race: seats freed, offered, expired and claimed concurrently on PostgreSQL
(bench/waitlist_race.py; its test is tests/events/test_waitlist_race.py)."""

from __future__ import annotations

from bench.infra import log
from bench.session import Session
from bench.tables import verdict

NAME = "waitlist"
TARGETS: dict[str, float] = {}


def measure(session: Session, url: str) -> dict:
    log("waitlist: 50 seats, 100 waiting, 30 cancellations racing with claims, outsiders and expiries")
    result = session.task(url, "waitlist-race", timeout=300)
    log(
        f"  {result['offers']} offers ({result['expired']} expired), {result['claimed']} claimed, "
        f"{result['oversold']} oversold, {result['offers_per_s']} offers/s"
    )
    return result


def rows(w: dict) -> list[tuple[str, str, str, str]]:
    return [
        (
            f"waiting list: {w['capacity']} seats, {w['cancellations']} cancellations racing claims "
            "and expiries",
            f"{w['offers']} offers ({w['expired']} expired, {w['claimed']} claimed), "
            f"{w['oversold']} oversold, queue order {'kept' if w['in_queue_order'] else 'BROKEN'}; "
            f"{w['offers_per_s']:.0f} offers/s",
            "0 oversold, queue order, each freed seat offered once",
            verdict(w["ok"]),
        )
    ]


def failures(w: dict) -> list[str]:
    if w["ok"]:
        return []
    return [f"waitlist: {w}"]
