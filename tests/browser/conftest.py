"""Real-browser fixtures: one Chromium (WebMCP enabled) per session, one seeded server per package.

Chromium and the in-page tool helpers (`wait_for_tools`, `start_tool_call`, …) are the harness's
(`harness/`), the same ones the eval runner and the bench use; tests import those from there.
The server is Django's LiveServerThread on 127.0.0.1 against the test database, seeded once with
`seed_demo`. Tests read and write that shared data; each test uses its own browser context (cookies)
and its own users or events when it changes state. The database is flushed when the package ends so
later tests start empty.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.test.testcases import LiveServerThread

from harness.chromium import installed, launch

# Playwright's sync API runs an event loop in this thread; Django's ORM calls in these tests are
# still synchronous and sequential, which is what this switch (documented by Django) allows.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not installed():
        pytest.skip("Debian's chromium is not installed (make test installs it with apt-get)")
    pytest.importorskip("playwright.sync_api")
    with launch(headless=True) as chromium:
        yield chromium
        # While Playwright's event loop runs in this thread, asgiref keeps Django's connections in a
        # context variable, apart from the thread's own: the tests since the launch used that one.
        # Close it before the loop stops, or its PostgreSQL session outlives the run and the test
        # database cannot be dropped.
        connections.close_all()


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
        test_name = str(conn.settings_dict.get("TEST", {}).get("NAME") or "")
        sqlite_test = conn.vendor == "sqlite" and (conn.is_in_memory_db() or name == test_name)
        if not (name.startswith("test_") or sqlite_test):
            pytest.fail(
                f"refusing to seed and flush {conn.alias!r} ({name}): not a test database. pytest-django "
                "creates one only when a collected test is marked django_db; run tests/browser as a whole "
                "or add such a test (e.g. tests/browser/test_database_guard.py) to the selection."
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
