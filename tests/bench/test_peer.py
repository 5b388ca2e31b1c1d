"""The peer rows stand on two things checked here with a short run: pretix seeded as bench/peer.py says
(a live event, one free item, a quota of the capacity, a working API token), and the request checks of
bench/visits.py, which count a registration or an order only when it was made, and a refusal as a
failure, on both sites.

pretix is installed as `make bench-peer` installs it (bench/peer.py: once on the machine, into the user's
cache; its pinned requirements from the package registry). Where it cannot be installed, the first test
is skipped and says why.
"""

from __future__ import annotations

import json
import os
import urllib.request
from itertools import count
from pathlib import Path

import pytest
from django.conf import settings

from accounts.tokens import create_access_token
from bench import peer, visits
from bench.figures.mcp import mcp_registration, rest_registration
from bench.figures.peer import our_browser_registration, pretix_api_order, pretix_checkout
from bench.infra import DB_PREFIX, Databases
from bench.sessions import signed_in_session
from events.choices import RegistrationStatus
from events.models import Registration
from tests.factories import EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Not the bench's own database names and Redis number: a bench may be running beside the test.
NAMES = peer.Names(
    seed=f"{DB_PREFIX}_pretix_test_seed",
    live=f"{DB_PREFIX}_pretix_test",
    redis_db=int(os.environ.get("TEST_PEER_REDIS_DB", "10")),
)


def _api(base: str, path: str, token: str) -> dict:
    request = urllib.request.Request(base + path, headers={"Authorization": f"Token {token}"})
    with urllib.request.urlopen(request, timeout=20) as answer:
        return json.loads(answer.read())


def _run(made: list[visits.Visit]) -> visits.Outcome:
    return visits.run(iter(made), connections=2, seconds=120)


@pytest.mark.own_database  # pretix on the bench's PostgreSQL
def test_pretix_is_seeded_as_said_and_the_checks_count_only_completed_orders(tmp_path):
    try:
        peer.install()
    except peer.PeerUnavailable as error:
        pytest.skip(f"pretix cannot be installed here: {error}")
    dbs = Databases.choose(tmp_path)
    if dbs.vendor != "postgresql":
        pytest.skip("pretix runs on the bench's PostgreSQL, which is not reachable")
    server = None
    try:
        seeded = peer.prepare(dbs, tmp_path, capacity=3, names=NAMES)
        config = Path(seeded["config"])
        assert peer.side(config, "check") == {
            "orders": {},
            "paid_positions": 0,
            "distinct_emails": 0,
            "quota": 3,
        }
        server = peer.PretixServer(config, tmp_path)
        base = server.start()
        path = f"/api/v1/organizers/{seeded['organizer']}/events/{seeded['event']}"
        event = _api(base, f"{path}/", seeded["token"])
        assert event["live"] is True
        items = _api(base, f"{path}/items/", seeded["token"])["results"]
        assert [(item["id"], item["default_price"]) for item in items] == [(seeded["item"], "0.00")]
        quotas = _api(base, f"{path}/quotas/", seeded["token"])["results"]
        assert [(quota["size"], quota["items"]) for quota in quotas] == [(3, [seeded["item"]])]

        emails = (f"test-{n}@example.com" for n in count())
        done = _run(
            [
                lambda: pretix_checkout(server.port, seeded, next(emails)),
                lambda: pretix_api_order(server.port, seeded, next(emails)),
                lambda: pretix_api_order(server.port, seeded, next(emails)),
            ]
        )
        assert (done.completed, done.failed, done.requests) == (3, 0, 9 + 1 + 1), done.errors
        assert peer.side(config, "check")["paid_positions"] == 3

        # The quota is taken: pretix refuses, and each visit's check counts a failure, not an order.
        refused = _run(
            [
                lambda: pretix_api_order(server.port, seeded, next(emails)),
                lambda: pretix_checkout(server.port, seeded, next(emails)),
            ]
        )
        assert (refused.completed, refused.failed) == (0, 2)
        assert peer.side(config, "check")["paid_positions"] == 3
    finally:
        if server is not None:
            server.stop()
        dbs.drop_all()


@pytest.mark.django_db(transaction=True)
def test_our_visits_count_only_confirmed_registrations(live_server):
    event = EventFactory(capacity=3)
    people = [UserFactory() for _ in range(4)]
    tokens = [
        create_access_token(user=user, name="bench", scopes=["registrations:write"], days=1)[1]
        for user in people
    ]
    port = int(live_server.url.rsplit(":", 1)[1])
    cookie = settings.SESSION_COOKIE_NAME
    keys = [signed_in_session(user) for user in people]  # before the visits' event loop: no query in it
    done = _run(
        [
            lambda: rest_registration(port, event.public_id, tokens[0]),
            lambda: mcp_registration(port, event.public_id, tokens[1]),
            lambda: our_browser_registration(port, event.public_id, keys[2], cookie),
        ]
    )
    assert (done.completed, done.failed, done.requests) == (3, 0, 1 + 2 + 3), done.errors
    confirmed = Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED)
    assert sorted(confirmed.values_list("user", flat=True)) == sorted(user.pk for user in people[:3])

    # The event is full: each way of registering is refused, and the checks count failures.
    refused = _run(
        [
            lambda: rest_registration(port, event.public_id, tokens[3]),
            lambda: mcp_registration(port, event.public_id, tokens[3]),
            lambda: our_browser_registration(port, event.public_id, keys[3], cookie),
        ]
    )
    assert (refused.completed, refused.failed) == (0, 3)
    assert confirmed.count() == 3
