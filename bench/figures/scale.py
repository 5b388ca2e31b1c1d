"""Search latency on 100 000 ÷ 1 000 events: two servers whose databases differ only in size."""

from __future__ import annotations

import json

from bench import load
from bench.figures.throughput import SEARCH_PATH
from bench.infra import BenchError, Server, http_get, log
from bench.tables import markdown, verdict

NAME = "scale"
TARGETS = {"scale_ratio": 2.0}
# Searches whose scaling is reported for information (no target): no condition at all, and a keyword.
OTHER_SEARCHES = {"no condition": "/api/events", "keyword": "/api/events?query=Django"}


def measure(small: Server, large: Server, profile: dict) -> dict:
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


def rows(s: dict) -> list[tuple[str, str, str, str]]:
    return [
        (
            f"search latency, {s['events']['large']:,} ÷ {s['events']['small']:,} events",
            f"{s['ratio']:.2f} (p50 {s['large']['p50_ms']:.1f} vs {s['small']['p50_ms']:.1f} ms)",
            f"≤ {TARGETS['scale_ratio']:.0f}",
            verdict(s["ratio"] <= TARGETS["scale_ratio"] and s["errors"] == 0),
        )
    ]


def failures(s: dict) -> list[str]:
    return [f"scale: {s['errors']} failed requests or server errors"] if s["errors"] else []


def details(s: dict) -> str | None:
    if not s.get("other_searches"):
        return None
    table = [
        (
            label,
            row["path"],
            f"{row['large_p50_ms']:.1f} ms",
            f"{row['small_p50_ms']:.1f} ms",
            f"{row['ratio']:.2f}",
        )
        for label, row in s["other_searches"].items()
    ]
    return "\nScaling of other searches (information, no target):\n" + markdown(
        table, ("search", "path", "p50, large", "p50, small", "ratio")
    )
