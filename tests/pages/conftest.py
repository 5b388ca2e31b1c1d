"""Fixtures for the page tests: English clients (assertions read English source strings)."""

from __future__ import annotations

import pytest
from django.test import Client

EN = {"Accept-Language": "en"}
HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """The page tests create many accounts; hashing strength is not what they test."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def en_client(db) -> Client:
    return Client(headers=EN)


@pytest.fixture
def signed_in_en_client(user) -> Client:
    client = Client(headers=EN)
    client.force_login(user)
    return client
