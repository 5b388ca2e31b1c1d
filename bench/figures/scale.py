"""Search latency on 100 000 ÷ 1 000 events: two servers whose databases differ only in size.

Three target rows: the filter search; keyword searches of three characters or more (ASCII and
Chinese) that match the same events in both data sets, which PostgreSQL answers from the trigram
indexes; and two-character keywords (Chinese and ASCII) that match the same events in both, answered
from the gram indexes (migration events/0012). Reported without a target: a one-character Chinese
keyword with the same matches in both (the gram indexes hold single characters too), keywords whose
matches grow with the data (the exact total counts every match), and no condition.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from bench import load
from bench.figures.throughput import SEARCH_PATH
from bench.infra import BenchError, Server, http_get, log
from bench.tables import markdown, verdict

NAME = "scale"
TARGETS = {"scale_ratio": 2.0, "keyword_scale_ratio": 2.0, "short_keyword_scale_ratio": 2.0}
# Keywords of 3+ characters matching RARE_COUNT events in every data set (bench/tasks.py adds them).
RARE_WORDS = ("Rustacean", "量子計算")
# Keywords of 2 characters, likewise: in no title or summary of the demo catalogue, case folded.
SHORT_WORDS = ("講座", "VR")
RARE_COUNT = 20
#: Every word bench/tasks.py plants in RARE_COUNT events of each data set.
PLANTED_WORDS = (*RARE_WORDS, *SHORT_WORDS)
KEYWORD_SEARCHES = {word: f"/api/events?query={quote(word)}" for word in RARE_WORDS}
SHORT_KEYWORD_SEARCHES = {word: f"/api/events?query={quote(word)}" for word in SHORT_WORDS}
# One character of 講座, in no other title or summary: RARE_COUNT matches too.
ONE_CHARACTER = "座"
# Reported for information (no target).
OTHER_SEARCHES = {
    f"keyword, 1 character, {RARE_COUNT} matches: {ONE_CHARACTER}": (
        f"/api/events?query={quote(ONE_CHARACTER)}"
    ),
    "keyword, matches grow with the data: Django": "/api/events?query=Django",
    "keyword, matches grow with the data: 工作坊": f"/api/events?query={quote('工作坊')}",
    "keyword, 2 characters, matches grow with the data: AI": "/api/events?query=AI",
    "keyword, 2 characters, matches grow with the data: 台北": f"/api/events?query={quote('台北')}",
    "no condition": "/api/events",
}


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
    keyword_searches = _compare_all(small, large, KEYWORD_SEARCHES, profile)
    short_keyword_searches = _compare_all(small, large, SHORT_KEYWORD_SEARCHES, profile)
    for word, row in (*keyword_searches.items(), *short_keyword_searches.items()):
        if row["small_total"] != RARE_COUNT or row["large_total"] != RARE_COUNT:
            raise BenchError(f"{word!r} should match {RARE_COUNT} events in both data sets: {row}")
    other_searches = {
        label: _compare(small, large, path, profile, rounds=max(1, profile["scale_rounds"] // 2))
        for label, path in OTHER_SEARCHES.items()
    }
    return {
        "path": SEARCH_PATH,
        "events": {"small": profile["scale_small"], "large": profile["scale_large"]},
        "matching": totals,
        "small": sides["small"],
        "large": sides["large"],
        "ratio": round(sides["large"]["p50_ms"] / sides["small"]["p50_ms"], 3),
        "mean_ratio": round(sides["large"]["mean_ms"] / sides["small"]["mean_ms"], 3),
        "errors": sides["small"]["errors"]
        + sides["large"]["errors"]
        + sum(
            row["errors"]
            for searches in (keyword_searches, short_keyword_searches, other_searches)
            for row in searches.values()
        ),
        "keyword_searches": keyword_searches,
        "keyword_ratio": max(row["ratio"] for row in keyword_searches.values()),
        "short_keyword_searches": short_keyword_searches,
        "short_keyword_ratio": max(row["ratio"] for row in short_keyword_searches.values()),
        "other_searches": other_searches,
    }


def _compare_all(small: Server, large: Server, searches: dict[str, str], profile: dict) -> dict:
    return {
        word: _compare(small, large, path, profile, rounds=profile["scale_rounds"])
        for word, path in searches.items()
    }


def _compare(small: Server, large: Server, path: str, profile: dict, *, rounds: int) -> dict:
    """p50 of one search, one connection, on both servers in alternating slices."""
    log(f"  {path}")
    totals = {}
    for name, server in (("small", small), ("large", large)):
        status, body = http_get(server.base_url + path)
        if status != 200:
            raise BenchError(f"{path} answered {status} on the {name} server: {body[:300]!r}")
        totals[name] = json.loads(body)["total"]
    measured = load.alternate(
        {"small": small.base_url + path, "large": large.base_url + path},
        rounds=rounds,
        seconds=profile["scale_slice_s"],
        connections=1,
        threads=1,
        warmup=1,
    )
    sides = {name: load.summarize(items) for name, items in measured.items()}
    return {
        "path": path,
        "small_total": totals["small"],
        "large_total": totals["large"],
        "small_p50_ms": sides["small"]["p50_ms"],
        "large_p50_ms": sides["large"]["p50_ms"],
        "ratio": round(sides["large"]["p50_ms"] / sides["small"]["p50_ms"], 3),
        "errors": sides["small"]["errors"] + sides["large"]["errors"],
    }


def rows(s: dict) -> list[tuple[str, str, str, str]]:
    sizes = f"{s['events']['large']:,} ÷ {s['events']['small']:,} events"
    keywords = s["keyword_searches"]
    short = s.get("short_keyword_searches")  # absent from results recorded before the gram indexes
    return [
        (
            f"search latency, {sizes}",
            f"{s['ratio']:.2f} (p50 {s['large']['p50_ms']:.1f} vs {s['small']['p50_ms']:.1f} ms)",
            f"≤ {TARGETS['scale_ratio']:.0f}",
            verdict(s["ratio"] <= TARGETS["scale_ratio"] and s["errors"] == 0),
        ),
        (
            f"keyword search (3+ characters, {RARE_COUNT} matches), {sizes}",
            _words(keywords),
            f"≤ {TARGETS['keyword_scale_ratio']:.0f}",
            verdict(s["keyword_ratio"] <= TARGETS["keyword_scale_ratio"] and s["errors"] == 0),
        ),
        *(
            [
                (
                    f"keyword search (2 characters, {RARE_COUNT} matches), {sizes}",
                    _words(short),
                    f"≤ {TARGETS['short_keyword_scale_ratio']:.0f}",
                    verdict(
                        s["short_keyword_ratio"] <= TARGETS["short_keyword_scale_ratio"] and s["errors"] == 0
                    ),
                )
            ]
            if short
            else []
        ),
    ]


def _words(searches: dict) -> str:
    return ", ".join(
        f"{word} {row['ratio']:.2f} ({row['large_p50_ms']:.1f} vs {row['small_p50_ms']:.1f} ms)"
        for word, row in searches.items()
    )


def failures(s: dict) -> list[str]:
    return [f"scale: {s['errors']} failed requests or server errors"] if s["errors"] else []


def details(s: dict) -> str | None:
    if not s.get("other_searches"):
        return None
    table = [
        (
            label,
            f"{row['large_total']:,} vs {row['small_total']:,}",
            f"{row['large_p50_ms']:.1f} ms",
            f"{row['small_p50_ms']:.1f} ms",
            f"{row['ratio']:.2f}",
        )
        for label, row in s["other_searches"].items()
    ]
    return "\nScaling of other searches (information, no target):\n" + markdown(
        table, ("search", "matches, large vs small", "p50, large", "p50, small", "ratio")
    )
