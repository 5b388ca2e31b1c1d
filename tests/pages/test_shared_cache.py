"""A shared cache in front of the site over real HTTP (a live server), as a CDN or a proxy would be: it
keeps an answer only when the answer says `public` with a max-age and sets no cookie, keys it by the
URL and the request headers its `Vary` names, serves it without asking while it is fresh, and then
revalidates it with its ETag (RFC 9111, the parts a CDN uses). Its clock is the test's: no waiting.

What it shows: the API's anonymous catalogue is served from the cache for PUBLIC_MAX_AGE, then
revalidated (a 304 while unchanged, the change once there is one); a signed-in visitor, an anonymous
visitor's pages and a WebMCP tool call are never kept, and never handed what was kept for another."""

from __future__ import annotations

import http.client
from dataclasses import dataclass, field
from importlib import import_module
from urllib.parse import urlsplit

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.base import SessionBase

from tests.factories import EventFactory, UserFactory

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]  # each test starts a process or a server

SEARCH = "/api/events?location=taipei"


@dataclass
class Kept:
    status: int
    headers: dict[str, str]
    body: bytes
    stored_at: float
    max_age: int
    request_vary: dict[str, str]


@dataclass
class SharedCache:
    """A minimal shared cache: what the site's headers allow, and nothing more."""

    origin: str
    now: float = 0.0
    entries: dict[str, list[Kept]] = field(default_factory=dict)
    origin_requests: int = 0

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, str]:
        """(status, body, where it came from: "cache", "revalidated" or "origin")."""
        sent = {name.lower(): value for name, value in (headers or {}).items()}
        kept = self._match(path, sent)
        if kept is not None and self.now - kept.stored_at < kept.max_age:
            return kept.status, kept.body, "cache"
        asked = dict(sent)
        if kept is not None:
            asked["if-none-match"] = kept.headers["etag"]
        status, answered, body = self._origin(path, asked)
        if status == 304 and kept is not None:
            kept.stored_at = self.now
            return kept.status, kept.body, "revalidated"
        self._store(path, sent, status, answered, body)
        return status, body, "origin"

    def _origin(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.origin_requests += 1
        parts = urlsplit(self.origin)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        try:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            answered = {name.lower(): value for name, value in response.getheaders()}
            return response.status, answered, response.read()
        finally:
            connection.close()

    def _match(self, path: str, sent: dict[str, str]) -> Kept | None:
        for kept in self.entries.get(path, []):
            if all(sent.get(name, "") == value for name, value in kept.request_vary.items()):
                return kept
        return None

    def _store(self, path: str, sent: dict[str, str], status: int, answered: dict, body: bytes) -> None:
        controls = {part.strip() for part in answered.get("cache-control", "").split(",")}
        ages = [int(part.removeprefix("max-age=")) for part in controls if part.startswith("max-age=")]
        if status != 200 or "public" not in controls or not ages or "set-cookie" in answered:
            return
        vary = [name.strip().lower() for name in answered.get("vary", "").split(",") if name.strip()]
        kept = Kept(status, answered, body, self.now, ages[0], {name: sent.get(name, "") for name in vary})
        self.entries.setdefault(path, []).insert(0, kept)


@pytest.fixture
def cdn(live_server, settings) -> SharedCache:
    settings.PUBLIC_MAX_AGE = 30
    return SharedCache(origin=live_server.url)


@pytest.fixture
def catalogue(transactional_db):
    return EventFactory(public_id="evt-cdn-one", title="Kept by the CDN")


def session_cookie() -> str:
    """A signed-in person's session cookie, made as the bench makes its own (no password sign-in)."""
    user = UserFactory(username="cdn-person")
    store: SessionBase = import_module(django_settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return f"{django_settings.SESSION_COOKIE_NAME}={store.session_key}"


def test_the_anonymous_catalogue_is_served_by_the_cache_for_its_max_age_then_revalidated(cdn, catalogue):
    status, body, source = cdn.get(SEARCH)
    assert (status, source) == (200, "origin") and b"Kept by the CDN" in body
    assert cdn.get(SEARCH)[2] == "cache"
    asked = cdn.origin_requests
    cdn.now += 31
    status, again, source = cdn.get(SEARCH)
    assert (status, source, again) == (200, "revalidated", body)  # a 304 from the site
    assert cdn.origin_requests == asked + 1


def test_a_change_reaches_the_anonymous_visitor_within_the_max_age(cdn, catalogue):
    cdn.get(SEARCH)
    catalogue.title = "Changed at the origin"
    catalogue.save()
    assert b"Changed at the origin" not in cdn.get(SEARCH)[1]  # still fresh in the cache
    cdn.now += 31
    status, body, source = cdn.get(SEARCH)
    assert (status, source) == (200, "origin") and b"Changed at the origin" in body


def test_a_signed_in_visitor_is_never_kept_nor_served_what_was_kept(cdn, catalogue):
    cookie = {"Cookie": session_cookie()}
    cdn.get(SEARCH)  # the anonymous answer, kept
    for path in (SEARCH, f"/api/events/{catalogue.public_id}", "/events/?location=taipei"):
        assert cdn.get(path, cookie)[2] == "origin"
        assert cdn.get(path, cookie)[2] == "origin"


def test_pages_are_never_kept(cdn, catalogue):
    for path in ("/events/?location=taipei", f"/events/{catalogue.public_id}/"):
        assert cdn.get(path)[2] == "origin"
        assert cdn.get(path)[2] == "origin"
    assert "/events/?location=taipei" not in cdn.entries


def test_a_tool_call_is_never_kept_nor_served_what_was_kept(cdn, catalogue):
    detail = f"/api/events/{catalogue.public_id}"
    tool = {"X-WebMCP-Tool": "get_event_details", "X-Client-Mode": "agent"}
    cdn.get(detail)  # kept for anonymous visitors
    assert cdn.get(detail)[2] == "cache"
    assert cdn.get(detail, tool)[2] == "origin"
    assert cdn.get(detail, tool)[2] == "origin"
