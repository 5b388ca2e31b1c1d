"""Tool path vs UI path: the task "free beginner events in Taipei" done once by one `search_events` call
(one request to the list page's route, which brings the list's region and the result) and once as a
person does it (fill the form, submit, wait for the list, read the page).

Each trial gets a fresh browser context (no cookies, empty cache). The two paths alternate.
"""

from __future__ import annotations

import json
import statistics
import time
from urllib.parse import urlsplit

from bench.infra import BenchError, log
from harness.tools import manifest_tool_names, visible_event_ids, wait_for_tools

TIMEOUT_MS = 15_000
TASK = {"location": "taipei", "price": "free", "level": "beginner"}


def manifest_names(page) -> list[str]:
    names = manifest_tool_names(page)
    if names is None:
        raise BenchError(f"no readable manifest on {page.url}")
    return names


def median_of(runs: list[dict], key: str) -> float | None:
    values = [run[key] for run in runs if key in run]
    return round(statistics.median(values), 1) if values else None


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def open_list(browser, base_url: str, *, init_script: str | None = None):
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto("/events/")
    wait_for_tools(page, manifest_names(page), timeout_ms=10_000, poll_ms=20)
    return context, page


# Marks inside the page during a tool call (performance.now(), ms), installed before any script of the
# page. The call is one request: the runtime fetches the page route with `X-WebMCP-Tool`, reads the
# answer (the search form, the results and the manifest, plus the result island), replaces those parts
# of the page (then `webmcp:shown`) and only then answers. The marks, taken only once a tool's
# execute() has started:
#   invoked   the browser called the tool's execute() (registerTool is wrapped to see it)
#   sent      the runtime called fetch() with the X-WebMCP-Tool header
#   headers   fetch() resolved (the response's status and headers are in)
#   body      response.text() resolved (the whole answer is in)
#   parsed    DOMParser.parseFromString returned (the answer as a document, to read the result island)
#   swapped   webmcp:shown: the new parts are in the document and htmx has processed them
#   settled   the same moment (kept apart in the split for older runs)
#   returned  execute() resolved: the answer goes back to the browser
# Resource Timing adds the request's own phases. Only for explaining where the tool path's time goes;
# the figure itself is timed from Python.
CALL_MARKS = """(() => {
  const marks = (window.__benchMarks = {});
  const now = () => performance.now();
  const context = document.modelContext;
  if (context && typeof context.registerTool === "function") {
    const register = context.registerTool.bind(context);
    context.registerTool = (definition, options) => register({
      ...definition,
      execute: async (...args) => {
        marks.invoked ??= now();
        try {
          return await definition.execute(...args);
        } finally {
          marks.returned ??= now();
        }
      },
    }, options);
  }
  const toolHeader = (args) => {
    const init = args[1] ?? {};
    const headers = new Headers(init.headers ?? (args[0] instanceof Request ? args[0].headers : undefined));
    return headers.get("X-WebMCP-Tool");
  };
  const original = window.fetch;
  window.fetch = function (...args) {
    const tool = toolHeader(args);
    if (!tool) return original.apply(this, args);
    marks.tool ??= tool;
    marks.url ??= new URL(String(args[0] instanceof Request ? args[0].url : args[0]), location.href).href;
    marks.sent ??= now();
    return original.apply(this, args).then((response) => {
      marks.headers ??= now();
      marks.contentType ??= response.headers.get("Content-Type");
      const text = response.text.bind(response);
      response.text = () => text().then((body) => {
        marks.body ??= now();
        marks.bodyChars ??= body.length;
        return body;
      });
      return response;
    });
  };
  const parse = DOMParser.prototype.parseFromString;
  DOMParser.prototype.parseFromString = function (...args) {
    const parsed = parse.apply(this, args);
    if (marks.body && !marks.parsed) marks.parsed = now();
    return parsed;
  };
  document.addEventListener("webmcp:shown", () => {
    if (!marks.invoked || marks.settled) return;
    marks.swapped = marks.settled = now();
    // The first frame drawn with the new region: a task queued by the next animation frame's callback
    // runs after that frame's style, layout and paint.
    requestAnimationFrame(() => setTimeout(() => { marks.painted ??= now(); }, 0));
  });
})();"""

# The tool request's Resource Timing entry: queueing, server (request sent → first byte), download.
CALL_TIMING = """(url) => {
  const entry = performance.getEntriesByName(url, "resource").at(-1);
  if (!entry) return null;
  return {
    fetchStart: entry.fetchStart,
    requestStart: entry.requestStart,
    responseStart: entry.responseStart,
    responseEnd: entry.responseEnd,
    encodedBodySize: entry.encodedBodySize,
    decodedBodySize: entry.decodedBodySize,
  };
}"""


# The person's search request (htmx sends it with XMLHttpRequest), the last one to the list's route.
PERSON_TIMING = """() => {
  const entry = performance.getEntriesByType("resource")
    .filter((item) => item.initiatorType === "xmlhttprequest" && new URL(item.name).pathname === "/events/")
    .at(-1);
  return entry && entry.requestStart && entry.responseStart
    ? { requestStart: entry.requestStart, responseStart: entry.responseStart }
    : null;
}"""


def counted(request, origin: str) -> bool:
    """A request the page made to the site itself for the task (static files are not counted)."""
    parts = urlsplit(request.url)
    return f"{parts.scheme}://{parts.netloc}" == origin and not parts.path.startswith("/static/")


def call_split(seconds: float, marks: dict, timing: dict | None) -> dict:
    """Where the call's time went, in ms; empty when a mark is missing (then the JSON says so)."""
    if not {"invoked", "sent", "headers", "body", "swapped", "settled", "returned"} <= set(marks):
        return {}
    in_page = marks["returned"] - marks["invoked"]
    split = {
        # execute() up to fetch(): reading the input, building the request.
        "before_request_ms": marks["sent"] - marks["invoked"],
        # Response headers in: the request, the server's work and the first bytes.
        "request_ms": marks["headers"] - marks["sent"],
        "body_ms": marks["body"] - marks["headers"],
        # Parsing the answer (DOMParser), then reading the result island and replacing the parts.
        "parse_swap_ms": marks["swapped"] - marks["body"],
        "settle_ms": marks["settled"] - marks["swapped"],
        # After the settle: pushState, the runtime's sync of the tools, execute() resolving.
        "after_swap_ms": marks["returned"] - marks["settled"],
        "in_page_ms": in_page,
        # The rest of the wall time: Playwright → DevTools → the page's execute(), and the answer's way
        # back (the browser, DevTools, Playwright's driver, Python). Chromium draws the changed page
        # before it hands the answer back, so the new region's first frame is in here too.
        "outside_ms": seconds * 1000 - in_page,
    }
    if "painted" in marks:
        # The first frame with the new region drawn, after the answer left execute() (negative: before).
        split["painted_after_return_ms"] = marks["painted"] - marks["returned"]
    if "parsed" in marks:
        split["parse_ms"] = marks["parsed"] - marks["body"]
        split["swap_ms"] = marks["swapped"] - marks["parsed"]
    if timing and timing.get("requestStart") and timing.get("responseStart"):
        split["server_ms"] = timing["responseStart"] - timing["requestStart"]
    return split


def by_tool(browser, base_url: str) -> dict:
    context, page = open_list(browser, base_url, init_script=CALL_MARKS)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(base_url))
    requests = []
    try:
        listener = lambda request: requests.append(request) if counted(request, origin) else None  # noqa: E731
        page.on("request", listener)
        started = time.perf_counter()
        result = page.webmcp.call_tool("search_events", TASK)
        seconds = time.perf_counter() - started
        page.remove_listener("request", listener)
        if not (isinstance(result, dict) and result.get("ok") is True and result.get("count", 0) > 0):
            raise BenchError(f"search_events did not answer the task: {str(result)[:500]}")
        ids = [event["id"] for event in result["events"]]
        # Self-check: the call showed its result to the person before it answered (uiUpdated is a
        # fact), so the visible list is already the result's, without waiting.
        shown = visible_event_ids(page)
        if result.get("uiUpdated") is not True or shown != ids:
            raise BenchError(
                f"the tool answered uiUpdated={result.get('uiUpdated')!r} but the page shows {shown}, "
                f"not its result {ids}"
            )
        # What the agent reads: the tool's answer as the browser hands it over (compact JSON text).
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
        # The first frame with the new region (normally drawn before the answer even left the browser).
        page.wait_for_function("() => !window.__benchMarks.settled || 'painted' in window.__benchMarks")
        marks = page.evaluate("() => window.__benchMarks")
        timing = page.evaluate(CALL_TIMING, marks["url"]) if "url" in marks else None
        return {
            "seconds": seconds,
            "bytes": utf8_size(text),
            "ids": ids,
            "requests": [f"{request.method} {urlsplit(request.url).path}" for request in requests],
            "tool_request": {
                "url": marks.get("url"),
                "header": marks.get("tool"),
                "content_type": marks.get("contentType"),
                "body_chars": marks.get("bodyChars"),
                "encoded_body_bytes": (timing or {}).get("encodedBodySize"),
            },
            **call_split(seconds, marks, timing),
        }
    finally:
        context.close()


# A tool that does nothing, registered by the bench on the same page: what calling any tool costs the
# caller (Playwright lists the tools, then evaluates the call, through DevTools, both ways). The floor
# of the tool path, as the bare view is the floor of the API; not part of any figure.
NOOP_TOOL = """() => {
  const controller = new AbortController();
  window.__benchNoop = controller;
  return document.modelContext.registerTool({
    name: "bench_noop",
    description: "Does nothing (bench).",
    inputSchema: { type: "object", properties: {} },
    execute: async () => ({ ok: true }),
  }, { signal: controller.signal });
}"""


def noop_call(browser, base_url: str) -> dict:
    context, page = open_list(browser, base_url)
    try:
        page.evaluate(NOOP_TOOL)
        wait_for_tools(page, [*manifest_names(page), "bench_noop"], timeout_ms=10_000, poll_ms=20)
        started = time.perf_counter()
        result = page.webmcp.call_tool("bench_noop", TASK)
        seconds = time.perf_counter() - started
        if result != {"ok": True}:
            raise BenchError(f"the bench's no-op tool answered {result!r}")
        return {"seconds": seconds}
    finally:
        context.close()


def by_person(browser, base_url: str) -> dict:
    context, page = open_list(browser, base_url)
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(base_url))
    requests = []
    try:
        page.on("request", lambda request: requests.append(request) if counted(request, origin) else None)
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
        ids = visible_event_ids(page)
        # The server's part of the person's path, taken as for the tool's request (side by side).
        timing = page.evaluate(PERSON_TIMING)
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
            "requests": [f"{request.method} {urlsplit(request.url).path}" for request in requests],
            **({"server_ms": timing["responseStart"] - timing["requestStart"]} if timing else {}),
        }
    finally:
        context.close()


def tool_vs_ui(browser, base_url: str, *, rounds: int) -> dict:
    tool_runs, person_runs, noop_runs = [], [], []
    by_tool(browser, base_url)  # warm-up (templates, connections), not recorded
    for index in range(rounds):
        order = (by_tool, by_person) if index % 2 == 0 else (by_person, by_tool)
        for path in order:
            (tool_runs if path is by_tool else person_runs).append(path(browser, base_url))
        noop_runs.append(noop_call(browser, base_url))
    if any(run["ids"] != tool_runs[0]["ids"] for run in tool_runs + person_runs):
        raise BenchError("the tool and the person did not get the same events for the same task")
    tool_s = statistics.median(run["seconds"] for run in tool_runs)
    person_s = statistics.median(run["seconds"] for run in person_runs)
    tool_bytes = round(statistics.median(run["bytes"] for run in tool_runs))
    person_bytes = round(statistics.median(run["bytes"] for run in person_runs))
    counts = sorted({len(run["requests"]) for run in tool_runs})
    log(
        f"  tool {tool_s * 1000:.0f} ms, {tool_bytes} B, {counts} request(s) per call; "
        f"person {person_s * 1000:.0f} ms, {person_bytes} B"
    )
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
        # Same-origin requests other than static files made during each call (the contract: 1).
        "tool_requests_per_call": sorted({len(run["requests"]) for run in tool_runs}),
        "tool_requests": tool_runs[0]["requests"],
        "tool_request": tool_runs[0]["tool_request"],
        "person_requests": person_runs[0]["requests"],
        # The person's search request, request sent → first byte (Resource Timing), as server_ms above.
        "person_server_ms": median_of(person_runs, "server_ms"),
        # Calling the bench's no-op tool the same way: the caller's own cost (see NOOP_TOOL).
        "noop_tool_ms": round(statistics.median(run["seconds"] for run in noop_runs) * 1000, 1),
        # Inside the tool call (medians, ms): see CALL_MARKS and call_split.
        "tool_split_ms": {
            key: median_of(tool_runs, key)
            for key in (
                "outside_ms",
                "painted_after_return_ms",
                "in_page_ms",
                "before_request_ms",
                "request_ms",
                "server_ms",
                "body_ms",
                "parse_swap_ms",
                "parse_ms",
                "swap_ms",
                "settle_ms",
                "after_swap_ms",
            )
        },
        "runs": {
            "tool_ms": [round(run["seconds"] * 1000, 1) for run in tool_runs],
            "person_ms": [round(run["seconds"] * 1000, 1) for run in person_runs],
            "noop_tool_ms": [round(run["seconds"] * 1000, 1) for run in noop_runs],
            "tool_split_ms": [
                {key: round(value, 1) for key, value in run.items() if key.endswith("_ms")}
                for run in tool_runs
            ],
        },
    }
