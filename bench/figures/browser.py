"""The browser figures, in Debian's Chromium with WebMCP on, driven by Playwright (never downloaded):
tool path vs UI path (`tool_path.py`) and tool availability with the bytes of /events/
(`availability.py`). Chromium is the harness's (`harness.chromium`), as in the tests and the evals.
"""

from __future__ import annotations

from bench.figures import availability, tool_path
from bench.infra import Server, log
from bench.tables import verdict
from harness.chromium import launch

NAME = "browser"
TARGETS = {"speedup": 3.0, "fewer_bytes": 5.0, "tools_ms": 50.0, "page_kb": 100.0}


def measure(server: Server, profile: dict) -> dict:
    log("Chromium (WebMCP): tool path vs UI path, tool availability, bytes of /events/")
    rounds = profile["browser_rounds"]
    with launch() as browser:
        return {
            "tool_vs_ui": tool_path.tool_vs_ui(browser, server.base_url, rounds=rounds),
            "availability": availability.availability(browser, server.base_url, rounds=rounds),
        }


def rows(b: dict) -> list[tuple[str, str, str, str]]:
    tv, av = b["tool_vs_ui"], b["availability"]
    requests = tv["tool_requests_per_call"]
    return [
        (
            "tool path vs UI path: time",
            f"{tv['speedup']:.1f}× faster ({tv['tool_ms']:.0f} vs {tv['person_ms']:.0f} ms)",
            f"≥ {TARGETS['speedup']:.0f}×",
            verdict(tv["speedup"] >= TARGETS["speedup"]),
        ),
        (
            "requests per tool call (same origin, not static)",
            f"{'–'.join(map(str, requests)) if len(requests) > 1 else requests[0]} "
            f"({', '.join(tv['tool_requests'])})",
            "1",
            verdict(requests == [1]),
        ),
        (
            "tool path vs UI path: bytes to read",
            f"{tv['fewer_bytes']:.1f}× fewer ({tv['tool_bytes'] / 1000:.1f} vs "
            f"{tv['person_text_bytes'] / 1000:.1f} kB of page text)",
            f"≥ {TARGETS['fewer_bytes']:.0f}×",
            verdict(tv["fewer_bytes"] >= TARGETS["fewer_bytes"]),
        ),
        (
            "tools registered after DOMContentLoaded",
            f"{av['after_dcl_ms']:.0f} ms ({len(av['tools'])} tools)",
            f"≤ {TARGETS['tools_ms']:.0f} ms",
            verdict(av["after_dcl_ms"] <= TARGETS["tools_ms"]),
        ),
        (
            "/events/ transferred, third-party requests",
            f"{av['bytes'] / 1000:.1f} kB in {av['requests']} requests, "
            f"{av['third_party_requests']} third-party",
            f"≤ {TARGETS['page_kb']:.0f} kB, 0",
            verdict(av["bytes"] / 1000 <= TARGETS["page_kb"] and av["third_party_requests"] == 0),
        ),
    ]


def failures(b: dict) -> list[str]:
    tool = b.get("tool_vs_ui")
    if tool and tool["tool_requests_per_call"] != [1]:
        return [
            f"browser: a search_events call made {tool['tool_requests_per_call']} requests, not exactly 1 "
            f"(first run: {tool['tool_requests']})"
        ]
    return []


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.0f}"


def notes(b: dict) -> list[str]:
    """Measurements that explain the figures (printed under the table, kept in the JSON)."""
    lines = []
    tv = b.get("tool_vs_ui")
    split = (tv or {}).get("tool_split_ms", {})
    if tv and split.get("in_page_ms") is not None:
        server = ""
        if split.get("server_ms") is not None:
            server = f" (server {_ms(split['server_ms'])} ms"
            if tv.get("person_server_ms") is not None:
                server += f"; the person's search request: {_ms(tv['person_server_ms'])} ms"
            server += ")"
        lines.append(
            f"tool call of {_ms(tv['tool_ms'])} ms (medians): in the page {_ms(split['in_page_ms'])} ms, "
            f"of which its one request {_ms(split['request_ms'])} ms to the response headers{server}, "
            f"the body {_ms(split['body_ms'])} ms, parsing the answer {_ms(split.get('parse_ms'))} ms and "
            f"swapping the region in {_ms(split.get('swap_ms'))} ms, settling {_ms(split['settle_ms'])} ms, "
            f"after the swap {_ms(split['after_swap_ms'])} ms; "
            f"outside the page {_ms(split['outside_ms'])} ms "
            f"(Playwright and DevTools both ways, and the first frame with the new region, drawn "
            f"{_ms(split.get('painted_after_return_ms'))} ms after the page answered; a no-op tool called "
            f"the same way takes {_ms(tv.get('noop_tool_ms'))} ms in all)"
        )
    if tv:
        aria, html, tool = tv["person_aria_snapshot_bytes"], tv["person_html_bytes"], tv["tool_bytes"]
        lines.append(
            f"page as an agent may read it: text {tv['person_text_bytes'] / 1000:.1f} kB, accessibility "
            f"snapshot {aria / 1000:.1f} kB ({aria / tool:.1f}× the tool's JSON), HTML {html / 1000:.1f} kB "
            f"({html / tool:.1f}×); page language {tv['page_language']!r}"
        )
    return lines
