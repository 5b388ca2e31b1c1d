"""Every limit kept per client address reads one address (core/clients.py), in both directions: behind
deploy/nginx.conf (`TRUSTED_PROXY_COUNT=1`, every request from nginx's own address) distinct clients
are counted apart, and with no trusted proxy (the default) a client that writes its own
`X-Forwarded-For` does not reset its limit."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory

from core.clients import client_address
from tests.api.conftest import ApiClient
from tests.factories import EventFactory, UserFactory
from tests.oauth import LOOPBACK_REDIRECT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

NGINX = "127.0.0.1"  # the address every request arrives from behind deploy/nginx.conf
EN = {"Accept-Language": "en"}


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def behind_nginx(settings):
    settings.TRUSTED_PROXY_COUNT = 1


def via_nginx(client_ip: str, written: str | None = None) -> dict[str, str]:
    """The headers nginx's `$proxy_add_x_forwarded_for` sends: what the client wrote, then its address."""
    return {"X-Forwarded-For": f"{written}, {client_ip}" if written else client_ip}


def sign_in(username: str, *, remote: str, headers: dict[str, str] | None = None):
    return Client(headers={**EN, **(headers or {})}, REMOTE_ADDR=remote).post(
        "/accounts/login/", {"username": username, "password": "wrong"}
    )


def register_client(*, remote: str, headers: dict[str, str] | None = None):
    body = {
        "client_name": "Agent",
        "redirect_uris": [LOOPBACK_REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    return Client(headers=headers or {}, REMOTE_ADDR=remote).post(
        "/register", json.dumps(body), content_type="application/json"
    )


@pytest.mark.parametrize(
    ("count", "forwarded", "expected"),
    [
        (0, "6.6.6.6", "10.0.0.9"),  # nothing trusted: the header is never read
        (1, "6.6.6.6, 203.0.113.5", "203.0.113.5"),  # the entry nginx appended, not the client's own
        (2, "6.6.6.6, 203.0.113.5, 10.1.1.1", "203.0.113.5"),
        (2, "203.0.113.5", "203.0.113.5"),  # fewer entries than proxies: the leftmost
        (1, "", "10.0.0.9"),
    ],
)
def test_client_address_reads_only_what_trusted_proxies_wrote(settings, count, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = count
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


# ── behind nginx: one visitor's failures pause that visitor only ─────────────────────────────


def test_behind_nginx_made_up_usernames_pause_sign_in_for_that_client_only(behind_nginx):
    for n in range(5):
        sign_in(f"made-up-{n}", remote=NGINX, headers=via_nginx("203.0.113.5"))
    assert sign_in("someone", remote=NGINX, headers=via_nginx("203.0.113.5")).status_code == 429
    UserFactory(username="innocent")
    other = Client(headers={**EN, **via_nginx("198.51.100.7")}, REMOTE_ADDR=NGINX)
    answer = other.post("/accounts/login/", {"username": "innocent", "password": "correct-horse-battery"})
    assert answer.status_code == 302  # another visitor behind the same nginx signs in


def test_behind_nginx_bad_tokens_pause_that_client_only(behind_nginx):
    EventFactory(public_id="evt-ip")
    guesser = Client(headers=via_nginx("203.0.113.5"), REMOTE_ADDR=NGINX)
    for n in range(20):
        guesser.get("/api/events/evt-ip", headers={"Authorization": f"Bearer are_guess{n:032d}"})
    bad = {"Authorization": "Bearer are_" + "x" * 36}
    assert guesser.get("/api/events/evt-ip", headers=bad).status_code == 429
    other = Client(headers=via_nginx("198.51.100.7"), REMOTE_ADDR=NGINX)
    assert other.get("/api/events/evt-ip", headers=bad).status_code == 401  # told, not paused


def test_behind_nginx_password_resets_are_counted_per_client(behind_nginx):
    asker = Client(headers={**EN, **via_nginx("203.0.113.5")}, REMOTE_ADDR=NGINX)
    for n in range(5):
        assert asker.post("/accounts/password_reset/", {"email": f"a{n}@example.com"}).status_code == 302
    assert asker.post("/accounts/password_reset/", {"email": "b@example.com"}).status_code == 429
    other = Client(headers={**EN, **via_nginx("198.51.100.7")}, REMOTE_ADDR=NGINX)
    assert other.post("/accounts/password_reset/", {"email": "c@example.com"}).status_code == 302


def test_behind_nginx_client_registrations_are_counted_per_client(behind_nginx, settings):
    settings.OAUTH_REGISTRATION_RATE = "2/hour"
    one = [register_client(remote=NGINX, headers=via_nginx("203.0.113.5")).status_code for _ in range(3)]
    assert one == [201, 201, 429]
    assert register_client(remote=NGINX, headers=via_nginx("198.51.100.7")).status_code == 201
    # Writing its own X-Forwarded-For in front of nginx's entry changes nothing for the first.
    forged = register_client(remote=NGINX, headers=via_nginx("203.0.113.5", written="192.0.2.1"))
    assert forged.status_code == 429


# ── no trusted proxy: the header a client writes is not its address ─────────────────────────


def test_a_forged_forwarded_for_does_not_reset_the_client_registration_limit(settings):
    settings.OAUTH_REGISTRATION_RATE = "2/hour"
    answers = [
        register_client(remote="203.0.113.5", headers={"X-Forwarded-For": f"192.0.2.{n}"}).status_code
        for n in range(3)
    ]
    assert answers == [201, 201, 429]


def test_a_forged_forwarded_for_does_not_reset_the_anonymous_write_rate(settings):
    settings.WRITE_THROTTLE_RATES = {"writes": "2/min"}
    EventFactory(public_id="evt-rate")
    answers = []
    for n in range(3):
        api = ApiClient(REMOTE_ADDR="203.0.113.5")  # a new session each time, as a script would
        answers.append(api.write("PUT", "/api/me/saved/evt-rate", X_Forwarded_For=f"192.0.2.{n}").status_code)
    assert answers == [201, 201, 429]


def test_a_forged_forwarded_for_does_not_reset_the_sign_in_pause():
    for n in range(5):
        sign_in(f"made-up-{n}", remote="203.0.113.5", headers={"X-Forwarded-For": f"192.0.2.{n}"})
    paused = sign_in("someone", remote="203.0.113.5", headers={"X-Forwarded-For": "192.0.2.99"})
    assert paused.status_code == 429
