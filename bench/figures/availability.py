"""Tool availability: time from DOMContentLoaded to the moment the page has registered every tool of its
manifest, measured inside the page; bytes transferred for /events/ and any request that leaves
127.0.0.1. Each load is a cold one, in a fresh browser context.

"Registered by t" is read from `getTools()`: a call made at t that lists every tool shows they were
registered by t. Its answer comes later, by Chromium's own round trip (observed 2–70 ms, however long
ago the tools were registered, and longer on a busy machine), so that wait is reported on its own as
information (`answer_ms`), not counted as the page's.
"""

from __future__ import annotations

import statistics
from urllib.parse import urlsplit

from bench.figures.tool_path import TIMEOUT_MS, manifest_names
from bench.infra import BenchError, log

# Runs before any script of the page: notes DOMContentLoaded, then the time of the first getTools() call
# that lists exactly the manifest's tools, and how long that call took to answer (checked at
# DOMContentLoaded, on every toolchange, and every 10 ms for 10 s at most).
AVAILABILITY_PROBE = """
(() => {
  const probe = { dcl: null, ready: null, answered: null, readyNames: null, checks: 0, pending: 0 };
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
    probe.pending += 1;
    const asked = performance.now();
    let names;
    try { names = (await context.getTools()).map((tool) => tool.name).sort(); }
    finally { probe.pending -= 1; }
    const answered = performance.now();
    if (JSON.stringify(names) === JSON.stringify(want) && (probe.ready === null || asked < probe.ready)) {
      probe.ready = asked;
      probe.answered = answered;
      probe.readyNames = names;
    }
  }
  document.addEventListener("DOMContentLoaded", () => { probe.dcl = performance.now(); check(); },
    { once: true, capture: true });
  // toolchange is the signal; a poll every 10 ms is the safety net should a change come without one.
  // Each tick asks without waiting for earlier answers, so the figure's resolution is 10 ms however
  // long Chromium takes to answer.
  check();
  const ticks = setInterval(() => {
    if (probe.ready !== null || performance.now() - started > 10000) clearInterval(ticks);
    else check();
  }, 10);
  document.modelContext?.addEventListener?.("toolchange", () => check());
})();
"""


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
        # Calls made earlier may still be answering, and the earliest call that lists them all counts.
        page.wait_for_function(
            "() => { const probe = window.__benchProbe;"
            " return probe && probe.ready !== null && probe.pending === 0; }"
        )
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
            "answer_ms": probe["answered"] - probe["ready"],
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
        "answer_ms": round(statistics.median(run["answer_ms"] for run in runs), 1),
        "bytes": round(statistics.median(run["bytes"] for run in runs)),
        "bytes_resource_timing": round(statistics.median(run["bytes_resource_timing"] for run in runs)),
        "requests": runs[0]["requests"],
        "urls": runs[0]["urls"],
        "failed_requests": sorted({url for run in runs for url in run["failed"]}),
        "third_party_requests": len(third_party),
        "third_party_urls": third_party,
    }
    log(
        f"  tools registered {result['after_dcl_ms']} ms after DOMContentLoaded (getTools answered in "
        f"{result['answer_ms']} ms); /events/ {result['bytes']} B "
        f"in {result['requests']} requests, {result['third_party_requests']} third-party"
    )
    return result
