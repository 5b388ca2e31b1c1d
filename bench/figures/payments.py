"""Payments at volume: the payment sweep, the bank import, and the real model's cost (information), all
in-process on a database of their own (bench.tasks payments; what it does: bench/payment_runs.py)."""

from __future__ import annotations

from bench.infra import log
from bench.session import Session
from bench.tables import verdict

NAME = "payments"
TARGETS = {"expired_per_write_ratio": 1.0, "bank_large_small_ratio": 12.0, "bank_again_ratio": 0.5}


def measure(session: Session, url: str, profile: dict) -> dict:
    sizes = profile["payments"]
    log(
        f"payments: the sweep over {sizes['registrations']:,} overdue registrations on {sizes['events']} "
        f"events with waiting lists; bank statements of {sizes['bank_small']:,} and {sizes['bank_large']:,} "
        "rows (in-process)"
    )
    args = [f"--{name.replace('_', '-')}={value}" for name, value in sizes.items()]
    result = session.task(url, "payments", *args, timeout=1800, ALLOWED_HOSTS="127.0.0.1,testserver")
    expiry, bank, write = result["expiry"], result["bank"], result["write"]
    log(
        f"  sweep {expiry['ms_per_expired']} ms per expired registration vs a write {write['median_ms']} ms; "
        f"statements per batch {expiry['statements_per_batch']}; bank {bank['large_small_ratio']} "
        f"(large ÷ small), again {bank['again_first_ratio']} of the first"
    )
    return result


def rows(p: dict) -> list[tuple[str, str, str, str]]:
    expiry, bank, write = p["expiry"], p["bank"], p["write"]
    imports = bank["imports"]
    statements = ", ".join(str(n) for n in expiry["statements_per_batch"])
    order = "kept" if expiry["offered_in_queue_order"] else "BROKEN"
    batches = len(expiry["batches"])
    ratio = p["per_expired_vs_write"]
    return [
        (
            f"payment sweep: {expiry['registrations']:,} overdue registrations on {expiry['events']} full "
            "events with waiting lists",
            f"{expiry['expired']:,} expired, {expiry['offers']:,} seats offered, queue order "
            f"{order}; {batches} batches of "
            f"{statements} statements ({'constant' if expiry['statements_constant'] else 'NOT constant'})",
            "every one expired, each seat offered in queue order, statements constant per batch",
            verdict(expiry["ok"]),
        ),
        (
            "payment sweep: time per expired registration ÷ one registration write (in-process)",
            f"{ratio:.2f} ({expiry['ms_per_expired']:.1f} vs {write['median_ms']:.1f} ms)",
            f"≤ {TARGETS['expired_per_write_ratio']:.0f}",
            verdict(ratio <= TARGETS["expired_per_write_ratio"] and expiry["ok"] and write["ok"]),
        ),
        (
            f"bank import: {bank['large']:,} rows ÷ {bank['small']:,} rows, time",
            f"{bank['large_small_ratio']:.2f} ({imports['large']['ms'] / 1000:.1f} vs "
            f"{imports['small']['ms'] / 1000:.1f} s; "
            f"{imports['large']['statements_per_row']:g} statements a row)",
            f"≤ {TARGETS['bank_large_small_ratio']:.0f}",
            verdict(bank["large_small_ratio"] <= TARGETS["bank_large_small_ratio"] and bank["all_matched"]),
        ),
        (
            f"bank import of the same {bank['large']:,} rows again ÷ the first",
            f"{bank['again_first_ratio']:.2f} ({imports['again']['ms'] / 1000:.1f} vs "
            f"{imports['large']['ms'] / 1000:.1f} s; {imports['again']['statements_per_row']:g} statements a "
            f"row); {'nothing changed' if bank['again_unchanged'] else 'CHANGED'}",
            f"≤ {TARGETS['bank_again_ratio']}, nothing changed",
            verdict(bank["again_first_ratio"] <= TARGETS["bank_again_ratio"] and bank["again_unchanged"]),
        ),
        model_row(p["model_runs"]),
    ]


def model_row(runs: dict) -> tuple[str, str, str, str]:
    label = "real model: tokens per passed case (prompt + completion), newest model run per path"
    if not runs:
        return (label, "no model run on this machine (evals/reports/)", "information", "–")
    shown = []
    for via, run in runs.items():
        path = {"webmcp": "WebMCP", "mcp": "MCP"}.get(via, via)
        if run["prompt_per_passed"] is None:
            shown.append(f"{path} no tokens recorded ({run['passed']} of {run['cases']} passed)")
            continue
        shown.append(
            f"{path} {run['prompt_per_passed']:,} + {run['completion_per_passed']:,} "
            f"({run['passed']} of {run['cases']} passed; {run['model'] or 'model'}, {run['revision']})"
        )
    return (label, "; ".join(shown), "information", "–")


def notes(p: dict) -> list[str]:
    expiry, bank = p["expiry"], p["bank"]
    batch = expiry["batches"][0] if expiry["batches"] else {}
    write = max(p["write"]["statements"], default=0)
    return [
        f"payments: a sweep batch of {batch.get('expired', 0)} registrations on {batch.get('events', 0)} "
        f"events made {batch.get('offers', 0)} offers in {batch.get('statements', 0)} statements: the "
        "batch's own are fixed, each offer adds its entry's update, its person's stateVersion and its "
        f"e-mail; a registration write is {write}",
        f"payments: bank import {bank['imports']['small']['ms_per_row']:.1f} and "
        f"{bank['imports']['large']['ms_per_row']:.1f} ms a row (small, large), "
        f"{bank['imports']['again']['ms_per_row']:.1f} ms a row again (found by its checksum; its Activity "
        "row is the only write)",
    ]


def failures(p: dict) -> list[str]:
    found = []
    expiry, bank = p["expiry"], p["bank"]
    if not expiry["ok"]:
        checks = {k: v for k, v in expiry.items() if isinstance(v, bool)}
        found.append(
            f"payments: the sweep expired {expiry['expired']} of {expiry['registrations']}; {checks}"
        )
    if not bank["ok"]:
        found.append(
            f"payments: bank import matched all {bank['all_matched']}, second import unchanged "
            f"{bank['again_unchanged']}"
        )
    if not p["write"]["ok"]:
        found.append("payments: a registration write did not hold its seat waiting for its payment")
    return found
