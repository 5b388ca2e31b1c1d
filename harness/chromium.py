"""How to start the Chromium that tests, evals and benchmarks drive: Debian's build, WebMCP enabled.

The flags and the launch are django-webmcp's test helpers (`django_webmcp.testing.browser`), the ones
the package documents for its users; this module only gives them the harness's error type.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django_webmcp.testing import browser as webmcp_browser

from harness import HarnessError

CHROMIUM = webmcp_browser.CHROMIUM
CHROMIUM_ARGS: tuple[str, ...] = webmcp_browser.CHROMIUM_ARGS
installed = webmcp_browser.installed


class ChromiumMissing(HarnessError, webmcp_browser.ChromiumMissing):
    """Debian's chromium is not installed."""


@contextmanager
def launch(headless: bool = True) -> Iterator[Any]:
    """`with launch() as browser:` — Playwright started, Chromium launched with the flags above, both
    closed at the end. One per test session, eval run or bench figure group."""
    if not installed():
        raise ChromiumMissing(
            f"{CHROMIUM} is missing: Debian's chromium is not installed (`make chromium` installs it)"
        )
    with webmcp_browser.launch(headless=headless) as chromium:
        yield chromium
