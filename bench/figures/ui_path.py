"""The UI path of an agent task: what a browser agent does and reads when it works the page itself.

A Playwright-based browser agent reads the page as its accessibility snapshot in Playwright's "ai" mode
(`page.aria_snapshot(mode="ai")`: the whole page's roles, names and text, with the element references
it acts on), the snapshot Playwright's MCP server hands a model. It reads one when it arrives, and one
after each action, once the page has settled: an htmx swap done, or a navigation loaded.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bench.figures.tool_path import utf8_size

# Runs before the page's scripts: counts htmx swaps, and `__benchSwapped(n)` resolves as soon as the
# page has seen n of them (a promise, not a poll, so waiting adds no polling interval).
SWAP_PROBE = """(() => {
  let swaps = 0;
  const waiting = [];
  document.addEventListener("htmx:afterSwap", () => {
    swaps += 1;
    for (const entry of waiting.filter((item) => swaps >= item.n)) {
      waiting.splice(waiting.indexOf(entry), 1);
      entry.resolve(swaps);
    }
  });
  window.__benchSwapped = (n) =>
    swaps >= n ? Promise.resolve(swaps) : new Promise((resolve) => waiting.push({ n, resolve }));
})();"""


class UIAgent:
    """An agent on a loaded page that acts on it (fill, select, click) and reads its snapshot.

    One step is one action, the wait for the page to settle, and the snapshot read afterwards. The
    snapshot read on arrival is not a step of its own (no action), but its bytes are read.
    """

    def __init__(self, page) -> None:
        self.page = page
        self.steps = 0
        # Each snapshot read: the action before it, its bytes, the step's ms and the read's own ms.
        self.reads: list[dict] = []
        self.swaps = 0  # htmx swaps this agent has caused (SWAP_PROBE counts them in the page)

    def observe(self, label: str, started: float | None = None) -> str:
        """Read the snapshot; note its size, the time it took, and the step's since `started`."""
        read_started = time.perf_counter()
        snapshot = self.page.aria_snapshot(mode="ai")
        now = time.perf_counter()
        step_ms = (now - (read_started if started is None else started)) * 1000
        self.reads.append(
            {
                "after": label,
                "bytes": utf8_size(snapshot),
                "ms": round(step_ms, 1),
                "read_ms": round((now - read_started) * 1000, 1),
            }
        )
        return snapshot

    def arrive(self) -> str:
        return self.observe("arrive")

    def act(self, label: str, action: Callable[[], object]) -> str:
        """An action that changes nothing but the control (a fill, a select): nothing to wait for."""
        started = time.perf_counter()
        action()
        self.steps += 1
        return self.observe(label, started)

    def act_and_swap(self, label: str, action: Callable[[], object]) -> str:
        """An action that sends an htmx request: done when its answer is swapped in."""
        started = time.perf_counter()
        action()
        self.swaps += 1
        self.page.evaluate("(n) => window.__benchSwapped(n)", self.swaps)
        self.steps += 1
        return self.observe(label, started)

    def act_and_navigate(self, label: str, action: Callable[[], object]) -> str:
        """An action that loads another page: done when that page has loaded."""
        started = time.perf_counter()
        with self.page.expect_navigation(wait_until="load"):
            action()
        self.swaps = 0  # a new document: SWAP_PROBE counts afresh
        self.steps += 1
        return self.observe(label, started)
