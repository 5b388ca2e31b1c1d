"""Fuzzing fixtures: the seeded catalogue, write paths that stay reachable, and the state a refusal keeps.

Every test here is bounded by Hypothesis settings (a fixed number of examples, no deadline) and is
derandomized, so `make test` runs the same cases every time. `HYPOTHESIS_PROFILE=explore` draws fresh
random cases instead, for a longer hunt by hand.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from events.models import Event, Registration, SavedEvent, VisitorState

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
settings.register_profile("explore", parent=settings.get_profile("ci"), derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def seeded(db) -> list[str]:
    """The demo catalogue (published, full, cancelled and past events); returns every public id."""
    call_command("seed_demo", verbosity=0)
    return sorted(Event.objects.values_list("public_id", flat=True))


@pytest.fixture
def seeded_registrations(seeded: list[str]) -> list[tuple[str, int]]:
    """Every seeded registration as (its event's public id, its id): confirmed ones, and the ones
    waiting for their transfer on the paid demo events."""
    return sorted(Registration.objects.values_list("event__public_id", "pk"))


@pytest.fixture
def operation_strategies(
    seeded: list[str], seeded_registrations: list[tuple[str, int]]
) -> Callable[[Any], list[Any]]:
    """The cases each fuzzer draws for an operation of the OpenAPI document: valid and invalid ones
    (Schemathesis' two modes), and, for an operation on one event or one registration, valid ones on the
    seeded rows (a random id would almost never name one): an event's id; a registration's id
    (`registration_id`, the managers' routes); an event's id with one of its attendees (`attendee_id`,
    the payment routes), so approvals, staff answers and payments reach a real registration."""

    def strategies(operation: Any) -> list[Any]:
        found = [
            operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
            operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
        ]
        names = {param.name for param in operation.path_parameters}
        if names == {"event_id", "attendee_id"}:
            found.append(
                st.sampled_from(seeded_registrations).flatmap(
                    lambda row: operation.as_strategy(
                        generation_mode=GenerationMode.POSITIVE,
                        path_parameters={"event_id": row[0], "attendee_id": row[1]},
                    )
                )
            )
        elif names == {"registration_id"}:
            found.append(
                st.sampled_from([pk for _, pk in seeded_registrations]).flatmap(
                    lambda pk: operation.as_strategy(
                        generation_mode=GenerationMode.POSITIVE, path_parameters={"registration_id": pk}
                    )
                )
            )
        elif "event_id" in names:
            found.append(
                st.sampled_from(seeded).flatmap(
                    lambda event_id: operation.as_strategy(
                        generation_mode=GenerationMode.POSITIVE, path_parameters={"event_id": event_id}
                    )
                )
            )
        return found

    return strategies


@pytest.fixture
def writes_unthrottled(settings):
    """Write throttling (tested in tests/api) would turn most generated writes into 429s."""
    settings.WRITE_THROTTLE_RATES = {"writes": None}
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def in_process_wsgi():
    """Let requests sent straight to the WSGI application share the test's database transaction.

    Django's handler closes "old" connections when a request starts and finishes; inside a test's
    transaction that would close it. Django's own test client switches this off the same way.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def write_snapshot() -> tuple[frozenset, ...]:
    """Every row a refused call must leave alone: saves, registrations (with status) and state versions.

    Stronger than counts: a refusal that flipped a registration's status would show here too.
    """
    return (
        frozenset(SavedEvent.objects.values_list("pk", "event_id", "user_id", "visitor_token")),
        frozenset(Registration.objects.values_list("pk", "event_id", "user_id", "status", "updated_at")),
        frozenset(VisitorState.objects.values_list("visitor_key", "version")),
    )


def own_idempotency_key(case) -> None:
    """Each generated case that sends a well-formed Idempotency-Key sends a key of its own. Hypothesis
    draws the same small keys again and again, and the same key with another request is rightly
    refused (422 IDEMPOTENCY_KEY_REUSED, tests/api/test_idempotency.py), which a check of one request
    at a time would read as valid data rejected. A malformed key is sent as drawn (400)."""
    headers = case.headers or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and re.fullmatch(r"[!-~]{1,255}", key):
        headers["Idempotency-Key"] = str(uuid.uuid4())
