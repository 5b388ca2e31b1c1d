"""Security settings: `check --deploy` is clean under the documented production variables, and the
headers and cookies every response carries."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

from tests.factories import EventFactory

pytestmark = pytest.mark.integration

PRODUCTION_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": "x7Hq2-documented-production-example-only-9fK3mZ8vR1tY6wB4nC0pL5sD-eJ",
    "ALLOWED_HOSTS": "events.example.org",
    "SITE_URL": "https://events.example.org",
    "SECURE_COOKIES": "1",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "REDIS_URL": "redis://cache.example.org:6379/0",  # sessions and counts shared by the processes
}


@pytest.mark.slow  # starts a process or a server
def test_check_deploy_is_clean_under_the_documented_production_settings():
    # The browser tests allow sync ORM calls under Playwright's loop; production never would.
    dropped = {"DATABASE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {key: value for key, value in os.environ.items() if key not in dropped} | PRODUCTION_ENV
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # starts a process or a server
def test_production_refuses_to_start_without_a_secret_key():
    env = {key: value for key, value in os.environ.items() if key != "SECRET_KEY"} | {"DEBUG": "0"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/events/", "/events/evt-sec/", "/api/events", "/health"])
def test_every_response_carries_the_security_headers(client, path):
    EventFactory(public_id="evt-sec")
    response = client.get(path)
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert "Origin-Agent-Cluster" not in response  # ?0 would break WebMCP calls in Chromium


@pytest.mark.django_db
def test_pages_contain_no_inline_script(client):
    EventFactory(public_id="evt-sec")
    for path in ("/events/", "/events/evt-sec/", "/me/", "/accounts/login/"):
        html = client.get(path).content.decode()
        for chunk in html.split("<script")[1:]:
            opening = chunk.split(">", 1)[0]
            assert (
                "src=" in opening or 'type="application/json"' in opening or "application/ld+json" in opening
            ), f"inline script on {path}: <script{opening}>"


@pytest.mark.django_db
def test_signing_in_sets_an_http_only_lax_session_cookie(client, user):
    response = client.post(
        "/accounts/login/", {"username": user.username, "password": "correct-horse-battery"}
    )
    assert response.status_code == 302
    cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie["httponly"] is True and cookie["samesite"] == "Lax"
