"""The waiting list under a real race on PostgreSQL (row locks), the scenario of bench/waitlist_race.py:
50 seats, 100 waiting, 30 cancellations racing with claims, registrations by others and expiries."""

import pytest
from django.db import connection

from bench import waitlist_race

pytestmark = pytest.mark.integration


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_offers_never_oversell_follow_the_queue_and_each_freed_seat_is_offered_once():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks and serialises writers; run with DATABASE_URL=postgres://…")
    result = waitlist_race.run(capacity=50, waiting=100, cancellations=30, outsiders=20)
    assert result["errors"] == [] and result["stuck_threads"] == [], result  # no deadlock, no error
    assert result["oversold"] == 0 and result["max_confirmed_plus_held"] <= 50, result
    assert result["confirmed"] + result["held"] == 50, result  # no freed seat lost
    assert result["offers"] == 30 + result["expired"], (
        result
    )  # each freed seat offered once (again on expiry)
    assert result["in_queue_order"], result
    assert result["outsiders_refused_full"] == 20, result  # held seats are nobody else's
    assert result["ok"], result
