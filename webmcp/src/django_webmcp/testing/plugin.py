"""django-webmcp's pytest plugin (loaded through the `pytest11` entry point once the package is
installed). Its fixtures are named `webmcp_…` so they never shadow a project's own.

- `webmcp_browser` (session): Chromium with WebMCP enabled (`django_webmcp.testing.browser.launch`);
  skips the test when Chromium or Playwright is missing.
- `webmcp_page`: a fresh browser context and page, wrapped in `WebMCPPage`: `.open(url)`, `.tools()`,
  `.call(name, input)`, `.start()`/`.confirm()`/`.finish()` for a call that waits for the person.
- `webmcp_mcp_client`: `mcp_client` (an async context manager factory) for `/mcp`, in-process or over HTTP.
- `webmcp_catalogue`: a callable asserting the default registry equals a snapshot file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def webmcp_browser() -> Iterator[Any]:
    from django_webmcp.testing import browser  # noqa: PLC0415 (loaded only when a test asks)

    if not browser.installed():
        pytest.skip(f"no Chromium at {browser.CHROMIUM} (Debian: apt-get install chromium)")
    pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop in this thread; Django allows its synchronous ORM
    # there only with this switch (documented by Django for such test drivers).
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with browser.launch(headless=True) as chromium:
        yield chromium


@pytest.fixture
def webmcp_page(webmcp_browser: Any) -> Iterator[Any]:
    from django_webmcp.testing.browser import WebMCPPage  # noqa: PLC0415 (loaded only when a test asks)

    context = webmcp_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        yield WebMCPPage(page)
    finally:
        context.close()


@pytest.fixture
def webmcp_mcp_client() -> Callable[..., Any]:
    pytest.importorskip("mcp")
    from django_webmcp.testing.mcp import mcp_client  # noqa: PLC0415 (the [mcp] extra)

    return mcp_client


@pytest.fixture
def webmcp_catalogue() -> Callable[[Any], None]:
    from django_webmcp.registry import registry  # noqa: PLC0415 (needs Django set up)
    from django_webmcp.testing.catalogue import assert_catalogue_unchanged  # noqa: PLC0415 (same)

    def check(snapshot: Any) -> None:
        assert_catalogue_unchanged(registry, snapshot)

    return check
