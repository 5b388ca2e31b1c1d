"""Idempotency-Key on every REST write (core/idempotency.py): the same key and request replay the first
answer and perform nothing again; another request under the key is 422; the key while its first
request runs is 409; keys are per caller and pruned after IDEMPOTENCY_KEY_HOURS."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.urls import get_resolver
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from core.idempotency import IdempotentWrites, caller_of
from core.models import IdempotencyKey
from core.tasks import prune_idempotency_keys
from events.choices import RegistrationStatus
from events.models import Activity, CheckIn, EventStaff, Registration, SavedEvent
from tests.api.conftest import ApiClient, assert_envelope
from tests.factories import EventFactory, RegistrationFactory, UserFactory
from tests.tasks import run_tasks

pytestmark = pytest.mark.integration

KEY = "9f1c6a52-0a8e-4b8e-9d43-6f1d2f0c7a11"
SCAN = "3b0c1d7e-5f6a-4b8c-9d0e-1f2a3b4c5d6e"


def signed_in(user) -> ApiClient:
    client = ApiClient()
    client.force_login(user)
    return client


def register(client: ApiClient, event_id: str, key: str | None = KEY, data=None):
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.write("POST", f"/api/events/{event_id}/registration", data, **headers)


def same_answer(first, again) -> None:
    assert again.status_code == first.status_code
    assert again.content == first.content
    kept = {name: value for name, value in first.items() if name not in ("Date", "Content-Length")}
    assert {name: again[name] for name in kept} == kept
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first


@pytest.mark.django_db
def test_the_same_key_and_request_replays_the_first_answer_and_performs_nothing(user):
    EventFactory(public_id="evt-idem", capacity=5)
    client = signed_in(user)
    first = register(client, "evt-idem")
    assert first.status_code == 201
    again = register(client, "evt-idem")
    same_answer(first, again)
    assert again.json()["registration"]["status"] == "confirmed"
    assert "alreadyRegistered" not in again.json() or again.json() == first.json()
    assert Registration.objects.filter(user=user).count() == 1
    assert Activity.objects.filter(action="register_event").count() == 1  # the replay is no call
    # Without the key the write runs again, as it always did (the use case's own idempotency).
    plain = register(client, "evt-idem", key=None)
    assert plain.status_code == 200 and plain.json()["alreadyRegistered"] is True


@pytest.mark.django_db
def test_a_kept_refusal_is_replayed_even_when_the_call_would_now_succeed(user):
    event = EventFactory(public_id="evt-idem-full", capacity=1)
    taken = RegistrationFactory(event=event)
    client = signed_in(user)
    refused = register(client, "evt-idem-full")
    assert_envelope(refused, 409, "CONFLICT", "EVENT_FULL")
    taken.delete()
    same_answer(refused, register(client, "evt-idem-full"))
    assert not Registration.objects.filter(user=user).exists()


@pytest.mark.django_db
def test_the_same_key_with_another_request_is_refused_and_does_nothing(user):
    EventFactory(public_id="evt-idem-a", capacity=5)
    EventFactory(public_id="evt-idem-b", capacity=5)
    client = signed_in(user)
    assert register(client, "evt-idem-a").status_code == 201
    other_path = register(client, "evt-idem-b")
    assert_envelope(other_path, 422, "INVALID_INPUT", "IDEMPOTENCY_KEY_REUSED")
    other_method = client.write("DELETE", "/api/events/evt-idem-a/registration", **{"Idempotency-Key": KEY})
    assert_envelope(other_method, 422, "INVALID_INPUT", "IDEMPOTENCY_KEY_REUSED")
    assert list(Registration.objects.values_list("event__public_id", "status")) == [
        ("evt-idem-a", RegistrationStatus.CONFIRMED)
    ]


@pytest.mark.django_db
def test_another_body_under_the_key_is_refused_and_the_same_data_in_another_order_is_not(user):
    event = EventFactory(public_id="evt-idem-door", capacity=5)
    EventStaff.objects.create(event=event, user=user, role="door")
    first, second = (RegistrationFactory(event=event) for _ in range(2))
    client = signed_in(user)
    headers = {"Idempotency-Key": KEY}
    path = "/api/events/evt-idem-door/check-ins"
    admitted = client.write("POST", path, f'{{"attendeeId": {first.pk}, "scanId": "{SCAN}"}}', **headers)
    assert admitted.status_code == 201
    reordered = client.write("POST", path, f'{{ "scanId": "{SCAN}",  "attendeeId": {first.pk} }}', **headers)
    same_answer(admitted, reordered)
    other = client.write("POST", path, f'{{"attendeeId": {second.pk}, "scanId": "{SCAN}"}}', **headers)
    assert_envelope(other, 422, "INVALID_INPUT", "IDEMPOTENCY_KEY_REUSED")
    assert list(CheckIn.objects.values_list("registration", flat=True)) == [first.pk]


@pytest.mark.django_db
def test_the_key_while_its_first_request_runs_is_in_use_and_an_abandoned_one_is_taken_over(user):
    EventFactory(public_id="evt-idem-busy", capacity=5)
    client = signed_in(user)
    running = IdempotencyKey.objects.create(caller=_caller(client), key=KEY, fingerprint="")
    running.fingerprint = _fingerprint_of(client, "evt-idem-busy")
    running.save()
    busy = register(client, "evt-idem-busy")
    body = assert_envelope(busy, 409, "TEMPORARY_FAILURE", "IDEMPOTENCY_KEY_IN_USE")
    assert body["retryable"] is True
    assert not Registration.objects.exists()
    # Its process died: after ABANDONED_AFTER the next request runs it.
    IdempotencyKey.objects.update(created_at=timezone.now() - timedelta(minutes=6))
    assert register(client, "evt-idem-busy").status_code == 201
    assert Registration.objects.count() == 1


@pytest.mark.django_db
def test_keys_are_per_caller(user, other_user):
    EventFactory(public_id="evt-idem-two", capacity=5)
    mine, theirs = register(signed_in(user), "evt-idem-two"), register(signed_in(other_user), "evt-idem-two")
    assert (mine.status_code, theirs.status_code) == (201, 201)
    assert "Idempotent-Replayed" not in theirs
    assert Registration.objects.count() == 2


@pytest.mark.django_db
def test_an_anonymous_visitors_session_keeps_its_keys(db):
    EventFactory(public_id="evt-idem-save")
    client = ApiClient()
    client.write("PUT", "/api/me/saved/evt-idem-save")  # the first save makes the visitor's session
    client.write("DELETE", "/api/me/saved/evt-idem-save")
    headers = {"Idempotency-Key": KEY}
    first = client.write("PUT", "/api/me/saved/evt-idem-save", **headers)
    assert first.status_code == 201
    client.write("DELETE", "/api/me/saved/evt-idem-save")  # another request, without a key
    same_answer(first, client.write("PUT", "/api/me/saved/evt-idem-save", **headers))
    assert not SavedEvent.objects.exists()  # the replay saved nothing again


@pytest.mark.django_db
def test_an_outage_or_the_write_rate_keeps_nothing_so_the_request_may_run_again(user, settings):
    EventFactory(public_id="evt-idem-rate", capacity=5)
    settings.WRITE_THROTTLE_RATES = {"writes": "1/min"}
    client = signed_in(user)
    client.write("PUT", "/api/me/saved/evt-idem-rate")  # the one write of the minute
    limited = register(client, "evt-idem-rate")
    assert_envelope(limited, 429, "TEMPORARY_FAILURE", "RATE_LIMITED")
    assert not IdempotencyKey.objects.exists()
    settings.WRITE_THROTTLE_RATES = {"writes": None}
    assert register(client, "evt-idem-rate").status_code == 201


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "x" * 256, "has space", "naïve"])
def test_a_malformed_key_is_refused(user, key):
    EventFactory(public_id="evt-idem-bad", capacity=5)
    response = signed_in(user).write(
        "POST", "/api/events/evt-idem-bad/registration", **{"Idempotency-Key": key.encode().decode("latin-1")}
    )
    assert_envelope(response, 400, "INVALID_INPUT", "IDEMPOTENCY_KEY_INVALID")
    assert not Registration.objects.exists()


@pytest.mark.django_db
def test_the_worker_prunes_keys_older_than_idempotency_key_hours(user, settings):
    settings.IDEMPOTENCY_KEY_HOURS = 24
    EventFactory(public_id="evt-idem-old", capacity=5)
    client = signed_in(user)
    register(client, "evt-idem-old")
    IdempotencyKey.objects.create(caller="x", key="fresh", fingerprint="f")
    IdempotencyKey.objects.filter(key=KEY).update(created_at=timezone.now() - timedelta(hours=25))
    DBTaskResult.objects.all().delete()
    prune_idempotency_keys.enqueue()
    run_tasks()
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["fresh"]
    assert (
        DBTaskResult.objects.filter(task_path=prune_idempotency_keys.module_path, status="READY").count() == 1
    )
    # A key past its hours is a new key even before the worker prunes it.
    IdempotencyKey.objects.create(
        caller=_caller(client),
        key="late",
        fingerprint="f",
        status=201,
        created_at=timezone.now() - timedelta(hours=25),
    )
    assert register(client, "evt-idem-old", key="late").status_code == 200  # performed: alreadyRegistered


def test_every_api_view_that_writes_honours_the_key():
    writers = []
    for pattern in get_resolver().url_patterns:
        for view, route in _api_views(pattern):
            cls = getattr(view, "cls", None)
            if cls is not None and any(hasattr(cls, method) for method in ("post", "put", "patch", "delete")):
                writers.append((route, issubclass(cls, IdempotentWrites)))
    assert writers and all(honoured for _route, honoured in writers), writers


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_requests_have_one_effect_and_the_same_answer():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers; run with DATABASE_URL=postgres://…")
    threads_count = 12
    event = EventFactory(public_id="evt-idem-race", capacity=5)
    user = UserFactory(username="racer")
    clients = [signed_in(user) for _ in range(threads_count)]
    barrier = threading.Barrier(threads_count)
    answers: list = [None] * threads_count
    in_use: list[int] = []

    def attempt(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            for _try in range(200):
                answer = register(clients[index], "evt-idem-race")
                if answer.status_code == 409 and answer.json()["reason"] == "IDEMPOTENCY_KEY_IN_USE":
                    in_use.append(index)
                    time.sleep(0.02)  # as its nextAction says: wait, then the same request again
                    continue
                answers[index] = answer
                return
        finally:
            connections.close_all()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert all(answer is not None for answer in answers)
    assert {(answer.status_code, answer.content) for answer in answers} == {
        (answers[0].status_code, answers[0].content)
    }
    assert answers[0].status_code == 201
    assert sum("Idempotent-Replayed" not in answer for answer in answers) == 1  # one performed it
    assert Registration.objects.filter(event=event, user=user).count() == 1
    assert Activity.objects.filter(action="register_event").count() == 1
    assert IdempotencyKey.objects.get().status == 201


def _caller(client: ApiClient) -> str:
    from django.test import RequestFactory

    request = RequestFactory().get("/")
    request.user = _user_of(client)
    request.session = {}
    caller = caller_of(request)
    assert caller is not None
    return caller


def _user_of(client: ApiClient):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(pk=client.session["_auth_user_id"])


def _fingerprint_of(client: ApiClient, event_id: str) -> str:
    from django.test import RequestFactory

    from core.idempotency import fingerprint

    request = RequestFactory().post(f"/api/events/{event_id}/registration", content_type="application/json")
    return fingerprint(request, b"")


def _api_views(pattern, prefix: str = ""):
    from django.urls import URLPattern, URLResolver

    if isinstance(pattern, URLResolver):
        for inner in pattern.url_patterns:
            yield from _api_views(inner, prefix + str(pattern.pattern))
    elif isinstance(pattern, URLPattern):
        route = prefix + str(pattern.pattern)
        if route.startswith("api/"):
            yield pattern.callback, route
