"""Shared fixtures."""

import pytest
from django.test import Client

from tests.factories import EventFactory, UserFactory


@pytest.fixture(autouse=True)
def activity_written_at_once(settings):
    """Each call's Activity row is written as the call ends, so a test can count it right away. The
    batched writer the site runs with is tested on its own (tests/events/test_activity_buffer.py)."""
    settings.ACTIVITY_FLUSH_SECONDS = 0


@pytest.fixture(autouse=True)
def compiled_statements_checked(settings):
    """Each search through a compiled statement (events/statements.py) is compared with the ORM's own
    compile of the same call: any difference fails the test that made the call."""
    settings.STATEMENT_CACHE_VERIFY = True


@pytest.fixture
def user(db):
    return UserFactory(username="alice")


@pytest.fixture
def other_user(db):
    return UserFactory(username="bob")


@pytest.fixture
def signed_in_client(user) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


@pytest.fixture
def event(db):
    return EventFactory(
        public_id="evt-webmcp-intro", title="WebMCP 入門工作坊", summary="從語意 HTML 到第一個網站 Tool。"
    )
