"""API test helpers: JSON clients that behave like a browser's fetch (CSRF enforced)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client


class ApiClient(Client):
    """A test client that sends the CSRF token on writes, as the pages and the tool runtime do."""

    def __init__(self, **kwargs):
        super().__init__(enforce_csrf_checks=True, **kwargs)
        # Django accepts the unmasked 32-character secret as the header token.
        self.csrf_token = "k" * 32
        self.cookies["csrftoken"] = self.csrf_token

    def write(self, method: str, path: str, data=None, **headers):
        call = getattr(self, method.lower())
        kwargs = {"HTTP_X_CSRFTOKEN": self.csrf_token}
        kwargs.update({f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()})
        return call(path, data="" if data is None else data, content_type="application/json", **kwargs)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Throttle counts live in the cache; each test starts with none."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api(db) -> ApiClient:
    return ApiClient()


@pytest.fixture
def signed_in_api(user) -> ApiClient:
    client = ApiClient()
    client.force_login(user)
    return client


def assert_envelope(response, status: int, code: str, reason: str | None = None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["ok"] is False
    assert body["code"] == code
    if reason is not None:
        assert body["reason"] == reason
    assert body["retryable"] is (code == "TEMPORARY_FAILURE")
    assert body["message"] and body["nextAction"]
    assert body["uiUpdated"] is False
    # Every envelope carries the key: the visitor's version, or null when it could not be read.
    assert "stateVersion" in body
    assert body["stateVersion"] is None or type(body["stateVersion"]) is int
    return body
