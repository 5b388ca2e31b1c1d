"""API search throughput and p99 against two ceilings on the same server, in alternating wrk slices.

The floor view (bench/urls.py) runs the endpoint's SQL through a raw cursor and renders the same bytes:
the fair ceiling, which the targets are set against. The bare view returns the captured bytes with no
work at all: the framework's ceiling, reported for information.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import load
from bench.infra import BenchError, Server, http_get, log
from bench.tables import verdict

NAME = "throughput"
TARGETS = {"floor_ratio": 0.75, "floor_p99_ratio": 2.0}
QUERY = "location=taipei&price=free&level=beginner"
SEARCH_PATH = f"/api/events?{QUERY}"
FLOOR_PATH = f"/bench/floor?{QUERY}"
BARE_PATH = "/bench/bare"


def measure(server: Server, workdir: Path, profile: dict) -> dict:
    log(f"API search vs floor and bare views, {profile['connections']} connections, alternating slices")
    status, body = http_get(server.base_url + SEARCH_PATH)
    payload = json.loads(body) if status == 200 else {}
    if status != 200 or payload.get("ok") is not True or payload.get("count") != 10:
        raise BenchError(f"the search did not answer a full page ({status}): {body[:300]!r}")
    (workdir / "bare.json").write_bytes(body)
    logged_before = len(server.errors_logged())
    for name, path in (("floor", FLOOR_PATH), ("bare", BARE_PATH)):
        other_status, other = http_get(server.base_url + path)
        if other_status != 200 or other != body:
            raise BenchError(
                f"the {name} view does not return the API's {len(body)} bytes "
                f"({other_status}, {len(other)}): {other[:300]!r}"
            )
    slices = load.alternate(
        {
            "api": server.base_url + SEARCH_PATH,
            "floor": server.base_url + FLOOR_PATH,
            "bare": server.base_url + BARE_PATH,
        },
        rounds=profile["rounds"],
        seconds=profile["slice_s"],
        connections=profile["connections"],
        threads=2,
        warmup=profile["warmup_s"],
    )
    sides = {name: load.summarize(items) for name, items in slices.items()}
    api, floor, bare = sides["api"], sides["floor"], sides["bare"]
    logged = server.errors_logged()[logged_before:]
    return {
        "path": SEARCH_PATH,
        "body_bytes": len(body),
        "total_matching": payload["total"],
        "connections": profile["connections"],
        "api": api,
        "floor": floor,
        "bare": bare,
        "floor_ratio": round(api["rate"] / floor["rate"], 3),
        "floor_p99_ratio": round(api["p99_ms"] / floor["p99_ms"], 3),
        "ratio": round(api["rate"] / bare["rate"], 3),
        "p99_ms": api["p99_ms"],
        "errors": sum(side["errors"] for side in sides.values()) + len(logged),
        "server_errors_logged": logged[:10],
    }


def rows(t: dict) -> list[tuple[str, str, str, str]]:
    ok = t["errors"] == 0
    api, floor, bare = t["api"], t["floor"], t["bare"]
    return [
        (
            "API search throughput ÷ floor view",
            f"{t['floor_ratio']:.2f} ({api['rate']:.0f} vs {floor['rate']:.0f} req/s)",
            f"≥ {TARGETS['floor_ratio']}",
            verdict(t["floor_ratio"] >= TARGETS["floor_ratio"] and ok),
        ),
        (
            f"API search p99 ÷ floor p99, {t['connections']} connections",
            f"{t['floor_p99_ratio']:.2f} ({api['p99_ms']:.0f} vs {floor['p99_ms']:.0f} ms)",
            f"≤ {TARGETS['floor_p99_ratio']:.0f}",
            verdict(t["floor_p99_ratio"] <= TARGETS["floor_p99_ratio"] and ok),
        ),
        (
            "API search throughput ÷ bare view",
            f"{t['ratio']:.2f} ({api['rate']:.0f} vs {bare['rate']:.0f} req/s; p99 {bare['p99_ms']:.0f} ms)",
            "information",
            "–",
        ),
    ]


def failures(t: dict) -> list[str]:
    return [f"throughput: {t['errors']} failed requests or server errors"] if t["errors"] else []
