"""Every API write runs at most seven SQL statements, however many saves, registrations and seats there
are: the session and its person (one statement), the event, the change and its reads, the
stateVersion, the e-mail's one outbox row when there is a mail, and the call's Activity row. `make
bench` reports the same counts against gunicorn's settings.

The Activity row is the seventh: it is inserted in the write's own transaction, so the audit trail
survives a crash (events/activity.py), where it used to be written in a batch off the request. Its
day count is not: that is added off the request after the commit, as are the rows of reads and
refusals, so the writes are counted here with the batched writer the site runs (not the tests' writer
of every row at once, tests/conftest.py). Not counted: BEGIN, COMMIT and savepoints (transaction
control).
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.tokens import create_access_token
from events import activity
from events.models import Event
from events.scopes import Scope
from tests.factories import (
    EventFactory,
    RegistrationFactory,
    SavedEventFactory,
    UserFactory,
    WaitlistEntryFactory,
    paid_event,
)

from .conftest import ApiClient

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")
#: Six for the write itself (a registration with its e-mail), one for its Activity row.
LIMIT = 7


@pytest.fixture(autouse=True)
def batched_activity(settings, monkeypatch):
    """The site's writer: a write's row in its transaction, everything else off the request."""
    fresh = activity.ActivityBuffer()
    monkeypatch.setattr(activity, "BUFFER", fresh)
    settings.ACTIVITY_FLUSH_SECONDS = 60
    yield
    fresh.close()


def statements(client: ApiClient, method: str, path: str, status: int, **headers) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.write(method, path, **headers)
    assert response.status_code == status, response.content
    found = [
        query["sql"]
        for query in captured.captured_queries
        if not query["sql"].startswith(TRANSACTION_CONTROL)
    ]
    activity_table = connection.ops.quote_name("events_activity")
    rows = [sql for sql in found if activity_table in sql or "events_activitycount" in sql]
    assert len(rows) == 1 and rows[0].startswith(f"INSERT INTO {activity_table}"), rows
    return found


def visitor_with(n: int) -> tuple[object, Event, Event]:
    """A person with `n` saves and registrations elsewhere; an open event with `n` seats taken by
    others, and a full one (capacity `n`) with `n` people waiting."""
    user = UserFactory(email="writer@example.com")
    for _ in range(n):
        event = EventFactory()
        SavedEventFactory(user=user, event=event)
        RegistrationFactory(user=user, event=event)
    open_event = EventFactory(capacity=100)
    full = EventFactory(capacity=n)
    for _ in range(n):
        RegistrationFactory(event=open_event)
        RegistrationFactory(event=full)
        WaitlistEntryFactory(event=full)
    return user, open_event, full


def counts(writer, n: int) -> dict[str, int]:
    """Statements per write for a person with `n` rows of each kind (visitor_with)."""
    user, open_event, full = visitor_with(n)
    client, headers = writer(user)
    saved = f"/api/me/saved/{open_event.public_id}"
    registration = f"/api/events/{open_event.public_id}/registration"
    waitlist = f"/api/events/{full.public_id}/waitlist"
    calls = [
        ("save_event", "put", saved, 201),
        ("unsave_event", "delete", saved, 200),
        ("register_event", "post", registration, 201),
        ("cancel_registration", "delete", registration, 200),
        ("join_waitlist", "post", waitlist, 201),
        ("leave_waitlist", "delete", waitlist, 200),
    ]
    return {
        name: len(statements(client, method, path, status, **headers)) for name, method, path, status in calls
    }


@pytest.fixture(params=["session", "token"])
def writer(request):
    """How a program is signed in: a session cookie (with CSRF) or a personal access token."""

    def make(user) -> tuple[ApiClient, dict[str, str]]:
        client = ApiClient()
        if request.param == "session":
            client.force_login(user)
            return client, {}
        _, raw = create_access_token(user=user, name="writes", scopes=[s.value for s in Scope], days=1)
        return client, {"Authorization": f"Bearer {raw}"}

    return make


def test_each_write_is_seven_statements_at_most_its_activity_row_included_the_same_for_1_and_20_rows(writer):
    few, many = counts(writer, 1), counts(writer, 20)
    assert few == many, "a statement runs per row"
    assert max(few.values()) <= LIMIT, few
    assert few["register_event"] == LIMIT  # the one write here with a mail: its outbox row is the sixth


def test_a_paid_registration_is_seven_statements_too_the_same_for_1_and_20_rows(writer):
    """A paid ticket type's registration carries its payment (type, amount, reference, deadline) in
    its own row: one INSERT as a free one, and the e-mail with the payment's instructions."""

    def paid_registration(n: int) -> int:
        user, _open_event, _full = visitor_with(n)
        event = paid_event(capacity=100, prices={"early": 600, "regular": 1200})
        for _ in range(n):
            RegistrationFactory(event=event, ticket_type="regular", amount=1200)
        client, headers = writer(user)
        client.get(
            "/api/me/registrations", **{f"HTTP_{k.upper()}": v for k, v in headers.items()}
        )  # a token's first use is noted once
        path = f"/api/events/{event.public_id}/registration"
        with CaptureQueriesContext(connection) as captured:
            response = client.write("post", path, {"ticket_type": "early"}, **headers)
        assert response.status_code == 201, response.content
        assert response.json()["registration"]["status"] == "pending_payment"
        return len([q for q in captured.captured_queries if not q["sql"].startswith(TRANSACTION_CONTROL)])

    few, many = paid_registration(1), paid_registration(20)
    assert few == many <= LIMIT, (few, many)
