"""API search throughput and p99 against a bare view on the same server, in alternating wrk slices."""

from __future__ import annotations

import json
from pathlib import Path

from bench import load
from bench.infra import BenchError, Server, http_get, log
from bench.tables import verdict

NAME = "throughput"
TARGETS = {"throughput_ratio": 0.6, "p99_ms": 50.0}
SEARCH_PATH = "/api/events?location=taipei&price=free&level=beginner"
BARE_PATH = "/bench/bare"


def measure(server: Server, workdir: Path, profile: dict) -> dict:
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


def rows(t: dict) -> list[tuple[str, str, str, str]]:
    return [
        (
            "API search throughput ÷ bare view",
            f"{t['ratio']:.2f} ({t['api']['rate']:.0f} vs {t['bare']['rate']:.0f} req/s)",
            f"≥ {TARGETS['throughput_ratio']}",
            verdict(t["ratio"] >= TARGETS["throughput_ratio"] and t["errors"] == 0),
        ),
        (
            f"API search p99 at {t['connections']} connections",
            f"{t['p99_ms']:.0f} ms (bare view {t['bare']['p99_ms']:.0f} ms)",
            f"≤ {TARGETS['p99_ms']:.0f} ms",
            verdict(t["p99_ms"] <= TARGETS["p99_ms"] and t["errors"] == 0),
        ),
    ]


def failures(t: dict) -> list[str]:
    return [f"throughput: {t['errors']} failed requests or server errors"] if t["errors"] else []
