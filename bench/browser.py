"""The browser figures, in Debian's Chromium with WebMCP on, driven by Playwright (never downloaded).

- tool path vs UI path: the task "free beginner events in Taipei" done once by one `search_events`
  call and once as a person does it (fill the form, submit, wait for the list, read the page);
- tool availability: time from DOMContentLoaded to the moment `getTools()` first lists every tool
  of the page's manifest, measured inside the page; bytes transferred for /events/ and any request
  that leaves 127.0.0.1.

Each trial gets a fresh browser context (no cookies, empty cache). The two paths alternate.
"""

from __future__ import annotations

import json
import statistics
import time
from urllib.parse import urlsplit

from bench.infra import BenchError, log
from webmcp.chromium import CHROMIUM, CHROMIUM_ARGS

TIMEOUT_MS = 15_000
TASK = {"location": "taipei", "price": "free", "level": "beginner"}

# Runs before any script of the page: notes DOMContentLoaded, then the first time getTools() lists
# exactly the manifest's tools (checked on every toolchange, and every 10 ms for 10 s at most).
AVAILABILITY_PROBE = """
(() => {
  const probe = { dcl: null, ready: null, readyNames: null, checks: 0 };
  window.__benchProbe = probe;
  const started = performance.now();
  const wanted = () => {
    const node = document.getElementById("webmcp-manifest");
    if (!node) return null;
    try { return JSON.parse(node.textContent).tools.map((tool) => tool.name).sort(); }
    catch (error) { return null; }
  };
  async function check() {
    if (probe.ready !== null) return;
    const context = document.modelContext;
    const want = wanted();
    if (!context || !want) return;
    probe.checks += 1;
    const names = (await context.getTools()).map((tool) => tool.name).sort();
    const now = performance.now();
    if (probe.ready === null && JSON.stringify(names) === JSON.stringify(want)) {
      probe.ready = now;
      probe.readyNames = names;
    }
  }
  document.addEventListener("DOMContentLoaded", () => { probe.dcl = performance.now(); check(); },
    { once: true, capture: true });
  // toolchange is the signal; a slow poll is the safety net should a change come without one.
  const loop = () => check().finally(() => {
    if (probe.ready === null && performance.now() - started < 10000) setTimeout(loop, 10);
  });
  loop();
  document.modelContext?.addEventListener?.("toolchange", () => check());
})();
"""


def launch(playwright):
    if not CHROMIUM.exists():
        raise BenchError("Debian's chromium is not installed (apt-get install -y chromium)")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS))


def manifest_names(page) -> list[str]:
    return sorted(
        tool["name"] for tool in json.loads(page.locator("#webmcp-manifest").text_content())["tools"]
    )


def wait_for_tools(page, expected: list[str], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while sorted(tool["name"] for tool in page.webmcp.tools()) != expected:
        if time.monotonic() > deadline:
            raise BenchError(f"tools on {page.url} never matched the manifest {expected}")
        page.wait_for_timeout(20)


def visible_ids(page) -> list[str]:
    return page.locator("#results [data-event-id]").evaluate_all("nodes => nodes.map(n => n.dataset.eventId)")


def median_of(runs: list[dict], key: str) -> float | None:
    values = [run[key] for run in runs if key in run]
    return round(statistics.median(values), 1) if values else None


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def open_list(browser, base_url: str):
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto("/events/")
    wait_for_tools(page, manifest_names(page))
    return context, page


# Marks inside the page during a tool call: the agent's submit, the API's answer, the list settled.
# Only for explaining where the tool path's time goes; the figure itself is timed from Python.
CALL_MARKS = """() => {
  const marks = (window.__benchMarks = {});
  const now = () => performance.now();
  window.addEventListener("submit", (event) => { if (event.agentInvoked) marks.submit ??= now(); }, true);
  document.addEventListener("htmx:afterSettle", () => { marks.settled = now(); });
  const original = window.fetch;
  window.fetch = (...args) => original(...args).then((response) => {
    if (String(args[0]).startsWith("/api/")) marks.answered ??= now();
    return response;
  });
}"""


def by_tool(browser, base_url: str) -> dict:
    context, page = open_list(browser, base_url)
    try:
        page.evaluate(CALL_MARKS)
        started = time.perf_counter()
        result = page.webmcp.call_tool("search_events", TASK)
        seconds = time.perf_counter() - started
        if not (isinstance(result, dict) and result.get("ok") is True and result.get("count", 0) > 0):
            raise BenchError(f"search_events did not answer the task: {str(result)[:500]}")
        ids = [event["id"] for event in result["events"]]
        # Self-check: the call also showed its result to the person, the same list.
        page.wait_for_function(
            "ids => JSON.stringify([...document.querySelectorAll('#results [data-event-id]')]"
            ".map(n => n.dataset.eventId)) === JSON.stringify(ids)",
            arg=ids,
        )
        # What the agent reads: the tool's answer as the browser hands it over (compact JSON text).
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        marks = page.evaluate("() => window.__benchMarks")
        split = {}
        if {"submit", "answered", "settled"} <= set(marks):
            ui_ms = marks["settled"] - marks["answered"]
            split = {
                "api_ms": marks["answered"] - marks["submit"],
                "ui_ms": ui_ms,
                # The same call had the runtime answered at once and updated the list afterwards.
                "answer_first_ms": seconds * 1000 - ui_ms,
            }
        return {"seconds": seconds, "bytes": utf8_size(text), "ids": ids, **split}
    finally:
        context.close()


def by_person(browser, base_url: str) -> dict:
    context, page = open_list(browser, base_url)
    try:
        # A marker inside the results: gone once the new results are swapped in.
        page.evaluate(
            "() => { const m = document.createElement('i'); m.id = 'bench-stale';"
            " document.getElementById('results').prepend(m); }"
        )
        started = time.perf_counter()
        form = page.locator("#search-form")
        for name, value in TASK.items():
            form.locator(f"[name={name}]").select_option(value)
        form.locator("button[type=submit]").click()
        page.wait_for_function(
            "() => !document.getElementById('bench-stale')"
            " && document.querySelectorAll('#results [data-event-id]').length > 0"
        )
        text = page.locator("body").inner_text()
        seconds = time.perf_counter() - started
        ids = visible_ids(page)
        query = page.evaluate("() => location.search")
        if not all(f"{name}={value}" in query for name, value in TASK.items()):
            raise BenchError(f"the person's search did not reach the URL: {query}")
        return {
            "seconds": seconds,
            "bytes": utf8_size(text),
            # Other ways an agent might read the same page, for comparison (not timed).
            "aria_bytes": utf8_size(page.locator("body").aria_snapshot()),
            "html_bytes": utf8_size(page.content()),
            "lang": page.evaluate("() => document.documentElement.lang"),
            "ids": ids,
        }
    finally:
        context.close()


def tool_vs_ui(browser, base_url: str, *, rounds: int) -> dict:
    tool_runs, person_runs = [], []
    by_tool(browser, base_url)  # warm-up (templates, connections), not recorded
    for index in range(rounds):
        order = (by_tool, by_person) if index % 2 == 0 else (by_person, by_tool)
        for path in order:
            (tool_runs if path is by_tool else person_runs).append(path(browser, base_url))
    if any(run["ids"] != tool_runs[0]["ids"] for run in tool_runs + person_runs):
        raise BenchError("the tool and the person did not get the same events for the same task")
    tool_s = statistics.median(run["seconds"] for run in tool_runs)
    person_s = statistics.median(run["seconds"] for run in person_runs)
    tool_bytes = round(statistics.median(run["bytes"] for run in tool_runs))
    person_bytes = round(statistics.median(run["bytes"] for run in person_runs))
    log(f"  tool {tool_s * 1000:.0f} ms, {tool_bytes} B; person {person_s * 1000:.0f} ms, {person_bytes} B")
    return {
        "task": TASK,
        "results": len(tool_runs[0]["ids"]),
        "tool_ms": round(tool_s * 1000, 1),
        "person_ms": round(person_s * 1000, 1),
        "speedup": round(person_s / tool_s, 2),
        "tool_bytes": tool_bytes,
        "person_text_bytes": person_bytes,
        "person_aria_snapshot_bytes": round(statistics.median(run["aria_bytes"] for run in person_runs)),
        "person_html_bytes": round(statistics.median(run["html_bytes"] for run in person_runs)),
        "page_language": person_runs[0]["lang"],
        "fewer_bytes": round(person_bytes / tool_bytes, 2),
        # Inside the tool call: submit → API answer, then API answer → the page's list updated.
        "tool_api_ms": median_of(tool_runs, "api_ms"),
        "tool_ui_update_ms": median_of(tool_runs, "ui_ms"),
        "tool_answer_first_ms": median_of(tool_runs, "answer_first_ms"),
        "runs": {
            "tool_ms": [round(run["seconds"] * 1000, 1) for run in tool_runs],
            "person_ms": [round(run["seconds"] * 1000, 1) for run in person_runs],
        },
    }


def availability_once(browser, base_url: str) -> dict:
    context = browser.new_context(base_url=base_url)
    try:
        context.add_init_script(AVAILABILITY_PROBE)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        requests, failed = [], []
        page.on("requestfinished", lambda request: requests.append(request))
        page.on("requestfailed", lambda request: failed.append(request))
        page.goto("/events/", wait_until="load")
        page.wait_for_load_state("networkidle")
        page.wait_for_function("() => window.__benchProbe && window.__benchProbe.ready !== null")
        probe = page.evaluate("() => window.__benchProbe")
        expected = manifest_names(page)
        if probe["readyNames"] != expected:
            raise BenchError(f"the probe saw {probe['readyNames']}, the manifest lists {expected}")
        origin = urlsplit(base_url)
        third_party = [
            request.url
            for request in requests + failed
            if urlsplit(request.url).scheme in ("http", "https")
            and urlsplit(request.url).hostname not in ("127.0.0.1", "localhost")
        ]
        own = [request for request in requests if urlsplit(request.url).netloc == origin.netloc]
        sizes = []
        for request in own:
            measured = request.sizes()
            sizes.append(measured["responseBodySize"] + measured["responseHeadersSize"])
        timing = page.evaluate(
            "() => ['navigation', 'resource'].flatMap((type) => performance.getEntriesByType(type))"
            ".reduce((sum, entry) => sum + (entry.transferSize || 0), 0)"
        )
        return {
            "after_dcl_ms": probe["ready"] - probe["dcl"],
            "tools": expected,
            "requests": len(requests),
            "failed": [request.url for request in failed],
            "bytes": sum(sizes),
            "bytes_resource_timing": timing,
            "third_party": third_party,
            "urls": sorted({urlsplit(request.url).path for request in own}),
        }
    finally:
        context.close()


def availability(browser, base_url: str, *, rounds: int) -> dict:
    availability_once(browser, base_url)  # warm-up, not recorded
    runs = [availability_once(browser, base_url) for _ in range(rounds)]
    delays = [run["after_dcl_ms"] for run in runs]
    third_party = sorted({url for run in runs for url in run["third_party"]})
    result = {
        "tools": runs[0]["tools"],
        # Negative: every tool was listed before DOMContentLoaded fired; reported as 0.
        "after_dcl_ms": round(max(0.0, statistics.median(delays)), 1),
        "after_dcl_ms_runs": [round(delay, 1) for delay in delays],
        "bytes": round(statistics.median(run["bytes"] for run in runs)),
        "bytes_resource_timing": round(statistics.median(run["bytes_resource_timing"] for run in runs)),
        "requests": runs[0]["requests"],
        "urls": runs[0]["urls"],
        "failed_requests": sorted({url for run in runs for url in run["failed"]}),
        "third_party_requests": len(third_party),
        "third_party_urls": third_party,
    }
    log(
        f"  tools ready {result['after_dcl_ms']} ms after DOMContentLoaded; /events/ {result['bytes']} B "
        f"in {result['requests']} requests, {result['third_party_requests']} third-party"
    )
    return result


def run_all(base_url: str, *, rounds: int) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            return {
                "tool_vs_ui": tool_vs_ui(browser, base_url, rounds=rounds),
                "availability": availability(browser, base_url, rounds=rounds),
            }
        finally:
            browser.close()
