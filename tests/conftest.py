"""Shared fixtures."""

import pytest
from django.test import Client

from tests.factories import EventFactory, UserFactory


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
