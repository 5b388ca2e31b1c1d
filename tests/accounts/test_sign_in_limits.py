"""Sign-in cannot be brute-forced: paused per account and per client address (django-axes), the same
answer whether the account exists, a success after the pause works, the admin lifts a pause; password
resets and bad access tokens are limited too."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from tests.factories import EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EN = {"Accept-Language": "en"}
PASSWORD = "correct-horse-battery"


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


def sign_in(username: str, password: str, *, address: str = "10.0.0.1"):
    return Client(headers=EN, REMOTE_ADDR=address).post(
        "/accounts/login/", {"username": username, "password": password}
    )


def test_five_failures_pause_the_account_whatever_is_typed_next(db):
    UserFactory(username="demo")
    for attempt in range(4):
        assert sign_in("demo", f"wrong-{attempt}").status_code == 200  # the form again, with its error
    assert sign_in("demo", "wrong-5").status_code == 429  # the fifth failure pauses sign-in
    paused = sign_in("demo", PASSWORD)  # even the right password, during the pause
    assert paused.status_code == 429 and paused["Retry-After"] == str(15 * 60)
    html = paused.content.decode()
    assert "Sign-in is paused" in html and "15 minutes" in html
    assert "demo" not in html.split('id="sign-in-paused"')[1]


def test_an_unknown_account_gets_the_same_answer(db):
    for attempt in range(5):
        sign_in("nobody-here", f"wrong-{attempt}")
    answer = sign_in("nobody-here", "anything")
    assert answer.status_code == 429 and "Sign-in is paused" in answer.content.decode()


def test_one_address_trying_many_accounts_is_paused(db):
    for n in range(5):
        sign_in(f"user{n}", "wrong", address="10.9.9.9")
    UserFactory(username="innocent")
    assert sign_in("innocent", PASSWORD, address="10.9.9.9").status_code == 429
    assert sign_in("innocent", PASSWORD, address="10.1.1.1").status_code == 302  # elsewhere: signed in


def test_after_the_pause_the_right_password_works_and_resets_the_count(db):
    UserFactory(username="demo")
    for attempt in range(5):
        sign_in("demo", f"wrong-{attempt}")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert sign_in("demo", PASSWORD).status_code == 302
    assert sign_in("demo", "wrong").status_code == 200  # counting starts again from zero


def test_the_admin_shows_and_lifts_a_pause(admin_client, db):
    UserFactory(username="demo")
    for attempt in range(5):
        sign_in("demo", f"wrong-{attempt}")
    listed = admin_client.get("/admin/axes/accessattempt/").content.decode()
    assert "demo" in listed
    attempt = AccessAttempt.objects.get(username="demo")
    admin_client.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
    assert sign_in("demo", PASSWORD).status_code == 302


def test_password_reset_requests_are_limited_without_revealing_accounts(db):
    UserFactory(username="demo", email="demo@example.com")
    client = Client(headers=EN, REMOTE_ADDR="10.2.2.2")
    for _ in range(5):
        assert client.post("/accounts/password_reset/", {"email": "demo@example.com"}).status_code == 302
    paused = client.post("/accounts/password_reset/", {"email": "demo@example.com"})
    assert paused.status_code == 429 and int(paused["Retry-After"]) > 0
    assert len(mail.outbox) == 5
    other = Client(headers=EN, REMOTE_ADDR="10.3.3.3")  # another client, the same address asked for
    assert other.post("/accounts/password_reset/", {"email": "demo@example.com"}).status_code == 429
    unknown = other.post("/accounts/password_reset/", {"email": "someone@example.com"})
    assert unknown.status_code == 302  # no account, same answer as for one


def test_a_client_guessing_tokens_is_paused_on_the_api_and_on_mcp(db):
    EventFactory(public_id="evt-guess")
    client = Client(REMOTE_ADDR="10.4.4.4")
    for n in range(20):
        bad = client.get("/api/events/evt-guess", headers={"Authorization": f"Bearer are_guess{n:032d}"})
        assert bad.status_code == 401
    limited = client.get("/api/events/evt-guess", headers={"Authorization": "Bearer are_" + "x" * 36})
    assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
    assert (limited.json()["code"], limited.json()["reason"]) == ("TEMPORARY_FAILURE", "RATE_LIMITED")
    mcp = client.post(
        "/mcp",
        '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',
        content_type="application/json",
        headers={
            "Authorization": "Bearer are_" + "y" * 36,
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    assert mcp.status_code == 429 and mcp.json()["reason"] == "RATE_LIMITED" and mcp["Retry-After"]
    # Without a token the site still answers: only token guessing is paused.
    assert Client(REMOTE_ADDR="10.4.4.4").get("/api/events/evt-guess").status_code == 200
