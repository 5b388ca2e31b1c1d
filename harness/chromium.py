"""How to start the Chromium that tests, evals and benchmarks drive: Debian's build, WebMCP enabled.

The flags are the ones observed to work with Debian's Chromium: `--enable-features=WebMCP`
must appear literally for Playwright's `page.webmcp`, and the networking flags keep the browser on
loopback. Playwright is imported only inside `launch`, so importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness import HarnessError

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS: tuple[str, ...] = (
    "--enable-features=WebMCP",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
)


class ChromiumMissing(HarnessError):
    """Debian's chromium is not installed."""


def installed() -> bool:
    return CHROMIUM.exists()


@contextmanager
def launch(headless: bool = True) -> Iterator[Any]:
    """`with launch() as browser:` — Playwright started, Chromium launched with the flags above, both
    closed at the end. One per test session, eval run or bench figure group."""
    if not installed():
        raise ChromiumMissing(
            f"{CHROMIUM} is missing: Debian's chromium is not installed (`make chromium` installs it)"
        )
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (optional: only when a browser is started)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=headless, args=list(CHROMIUM_ARGS)
        )
        try:
            yield browser
        finally:
            browser.close()
