"""Real-browser fixtures: one Chromium (WebMCP enabled) per session, one seeded server per package.

The server is Django's LiveServerThread on 127.0.0.1 against the test database, seeded once with
`seed_demo`. Tests read and write that shared data; each test uses its own browser context (cookies)
and its own users or events when it changes state. The database is flushed when the package ends so
later tests start empty.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.test.testcases import LiveServerThread

from webmcp.chromium import CHROMIUM, CHROMIUM_ARGS

# Playwright's sync API runs an event loop in this thread; Django's ORM calls in these tests are
# still synchronous and sequential, which is what this switch (documented by Django) allows.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make test installs it with apt-get)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_ARGS)
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="package")
def server(django_db_setup, django_db_blocker) -> Iterator[str]:
    """Base URL of a live server over the seeded test database."""
    with django_db_blocker.unblock():
        _refuse_unless_test_database()
        call_command("seed_demo", verbosity=0)
        overrides = {}
        for conn in connections.all():
            if conn.vendor == "sqlite" and conn.is_in_memory_db():
                overrides[conn.alias] = conn
                conn.inc_thread_sharing()
        thread = LiveServerThread("127.0.0.1", StaticFilesHandler, connections_override=overrides)
        thread.daemon = True
        thread.start()
        thread.is_ready.wait()
        if thread.error:
            raise thread.error
        try:
            yield f"http://127.0.0.1:{thread.port}"
        finally:
            thread.terminate()
            for conn in overrides.values():
                conn.dec_thread_sharing()
            _close_server_sessions()
            call_command("flush", interactive=False, verbosity=0)


def _refuse_unless_test_database() -> None:
    """This fixture seeds and then flushes its database: never let that be a real one."""
    for conn in connections.all():
        name = str(conn.settings_dict["NAME"])
        if not (name.startswith("test_") or (conn.vendor == "sqlite" and conn.is_in_memory_db())):
            pytest.fail(
                f"refusing to seed and flush {conn.alias!r} ({name}): not a test database. pytest-django "
                "creates one only when a collected test is marked django_db; run tests/browser as a whole "
                "or add such a test (e.g. tests/api/test_health.py) to the selection."
            )


def _close_server_sessions() -> None:
    """Keep-alive handler threads of the live server may still hold PostgreSQL sessions; end them so
    the test database can be dropped at the end of the run."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


@pytest.fixture
def orm(server, django_db_blocker):
    """ORM access to the server's data inside a browser test (no wrapping transaction)."""
    with django_db_blocker.unblock():
        yield


@pytest.fixture
def context(browser, server):
    context = browser.new_context(base_url=server, viewport={"width": 1280, "height": 900})
    yield context
    context.close()


@pytest.fixture
def page(context):
    page = context.new_page()
    page.set_default_timeout(10_000)
    return page


@pytest.fixture
def make_user(orm):
    """Create a fresh user (unique name) for a test that changes state."""
    from tests.factories import UserFactory

    def make(prefix: str = "visitor"):
        return UserFactory(username=f"{prefix}-{uuid.uuid4().hex[:8]}")

    return make


@pytest.fixture
def sign_in(context, server, orm):
    """Sign a user in for this browser context by giving it a real session cookie."""

    def sign(user) -> None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": server}])

    return sign


# ---- looking at a page as an agent does ----------------------------------------------------------


def manifest(page) -> dict:
    """The manifest the server rendered into the page (what the runtime registers from)."""
    return json.loads(page.locator("#webmcp-manifest").text_content())


def tool_names(page) -> list[str]:
    return [tool["name"] for tool in page.webmcp.tools()]


def wait_for_tools(page, expected: list[str] | set[str], timeout_ms: int = 5_000) -> list[dict]:
    """Form tools appear one task after parsing and tools follow swaps: poll until the set matches."""
    expected = sorted(expected)
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        tools = page.webmcp.tools()
        names = [tool["name"] for tool in tools]
        if sorted(names) == expected:
            assert len(names) == len(set(names)), f"duplicate tools registered: {names}"
            return tools
        if time.monotonic() > deadline:
            raise AssertionError(f"tools on {page.url} are {sorted(names)}, expected {expected}")
        page.wait_for_timeout(50)


def start_tool_call(page, name: str, tool_input: dict) -> None:
    """Start a call without waiting for it (a declarative form waits for the person's click)."""
    page.evaluate(
        """async ([name, input]) => {
            window.__toolResult = undefined;
            const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
            if (!tool) throw new Error(`no tool ${name}`);
            document.modelContext.executeTool(tool, input).then(
                (text) => { window.__toolResult = {text}; },
                (error) => { window.__toolResult = {error: String(error)}; });
        }""",
        [name, tool_input],
    )


def tool_call_pending(page) -> bool:
    return page.evaluate("() => window.__toolResult === undefined")


def finish_tool_call(page, timeout_ms: int = 10_000) -> dict:
    page.wait_for_function("() => window.__toolResult !== undefined", timeout=timeout_ms)
    outcome = page.evaluate("() => window.__toolResult")
    assert "error" not in outcome, f"the tool call failed in the browser: {outcome['error']}"
    return json.loads(outcome["text"])


def visible_event_ids(page) -> list[str]:
    """Ids of the event cards the person sees in the results list, in order."""
    return page.locator("#results [data-event-id]").evaluate_all("nodes => nodes.map(n => n.dataset.eventId)")


@pytest.fixture
def make_event(orm):
    """A fresh event with a unique id for a test that changes state. It starts in 2031, after every
    demo event, so it never pushes the seeded events out of the first page of a search."""
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    from tests.factories import EventFactory

    def make(prefix: str = "evt-browser", **fields):
        if not fields.get("past"):
            fields.setdefault("starts_at", datetime(2031, 6, 1, 10, tzinfo=ZoneInfo("Asia/Taipei")))
            fields.setdefault("ends_at", fields["starts_at"] + timedelta(hours=2))
        return EventFactory(public_id=f"{prefix}-{uuid.uuid4().hex[:8]}", **fields)

    return make
