"""Concurrent registrations never oversell: the event row is locked before seats are counted."""

import threading

import pytest
from django.db import connection, connections

from events.choices import RegistrationStatus
from events.models import Registration
from tests.api.conftest import ApiClient
from tests.factories import EventFactory, UserFactory

pytestmark = pytest.mark.integration

THREADS = 40
CAPACITY = 10


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_register_event_concurrently_never_oversells():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks and serialises writers; run with DATABASE_URL=postgres://…")
    event = EventFactory(public_id="evt-rush", capacity=CAPACITY)
    clients = []
    for n in range(THREADS):
        client = ApiClient()
        client.force_login(UserFactory(username=f"rush{n}"))
        clients.append(client)
    barrier = threading.Barrier(THREADS)
    responses: list = [None] * THREADS

    def attempt(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            responses[index] = clients[index].write("POST", "/api/events/evt-rush/registration")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201] * CAPACITY + [409] * (THREADS - CAPACITY)
    full = [response.json() for response in responses if response.status_code == 409]
    assert {(body["code"], body["reason"]) for body in full} == {("CONFLICT", "EVENT_FULL")}
    assert Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count() == CAPACITY
