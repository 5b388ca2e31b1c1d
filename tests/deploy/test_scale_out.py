"""Scale-out: two app server processes behind no shared memory, one PostgreSQL and one Redis.

A session created through one process is valid on the other (sessions live in the database), and the
write rate limit is counted across both (throttle counts live in Redis via REDIS_URL).
"""

import json
import socket
import urllib.error
import urllib.request
import uuid
from contextlib import ExitStack

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from tests.factories import EventFactory, UserFactory
from tests.tasks import start_gunicorn

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # each test starts a process or a server

REDIS = ("127.0.0.1", 6379)
CSRF = "s" * 32


def _reachable(address: tuple[str, int]) -> bool:
    try:
        with socket.create_connection(address, timeout=1):
            return True
    except OSError:
        return False


def _start(stack: ExitStack, env: dict[str, str]) -> str:
    process, base = start_gunicorn(**env)
    stack.callback(lambda: (process.terminate(), process.wait(timeout=10)))
    return base


def _call(base: str, method: str, path: str, session: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{base}{path}",
        method=method,
        headers={
            "Cookie": f"sessionid={session}; csrftoken={CSRF}",
            "X-CSRFToken": CSRF,
            "Content-Type": "application/json",
            "Referer": f"{base}/",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.django_db(transaction=True)
def test_two_app_servers_share_sessions_and_rate_limits():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL shared by two processes; run with DATABASE_URL=postgres://…")
    if not _reachable(REDIS):
        pytest.skip("needs Redis on 127.0.0.1:6379")
    user = UserFactory(username=f"scale-{uuid.uuid4().hex[:6]}")
    event = EventFactory(public_id="evt-scale-out")
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    env = {
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "CACHE_KEY_PREFIX": f"scale-{uuid.uuid4().hex}",
        "WRITE_THROTTLE_RATE": "3/min",
        "SECRET_KEY": settings.SECRET_KEY,  # the session hash is signed with it
    }
    with ExitStack() as stack:
        first, second = _start(stack, env), _start(stack, env)
        saved = f"/api/me/saved/{event.public_id}"
        assert _call(second, "GET", "/api/me/registrations", session)[0] == 200  # signed in on both
        assert _call(first, "PUT", saved, session)[0] == 201
        assert _call(second, "DELETE", saved, session)[0] == 200
        assert _call(first, "PUT", saved, session)[0] == 201
        status, body = _call(second, "DELETE", saved, session)
        assert status == 429, body
        assert (body["code"], body["reason"]) == ("TEMPORARY_FAILURE", "RATE_LIMITED")
        assert _call(first, "GET", "/api/me/saved", session)[1]["count"] == 1  # the refused write did nothing
