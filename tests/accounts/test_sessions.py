"""The session engine reads a session and its person in one statement (core/sessions.py), and
Django's own checks of that person still decide who is signed in."""

from __future__ import annotations

import pytest
from django.contrib.auth import SESSION_KEY
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import Session
from tests.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PASSWORD = "a-long-pass-2027"
MINE = "/api/me/registrations"  # only a signed-in person has registrations (anyone may have saves)


def signed_in(user) -> Client:
    """Signed in through the sign-in page, as a person is (django-axes needs the request)."""
    client = Client()
    response = client.post("/accounts/login/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302, response.content[:300]
    return client


def saved_ids(client: Client) -> list[str] | None:
    """The ids on the client's saved list, or None when the site does not see them signed in."""
    response = client.get("/api/me/saved")
    return [item["id"] for item in response.json()["events"]] if response.status_code == 200 else None


@pytest.fixture
def person():
    user = UserFactory(username="carol")
    user.set_password(PASSWORD)
    user.save()
    return user


def statements_naming(queries: CaptureQueriesContext, table: str) -> list[str]:
    quoted = connection.ops.quote_name(table)
    return [query["sql"] for query in queries.captured_queries if quoted in query["sql"]]


def test_the_session_and_its_person_are_one_statement(person):
    client = signed_in(person)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/me/saved")
    assert response.status_code == 200
    [session_read] = statements_naming(queries, "accounts_session")
    assert connection.ops.quote_name("auth_user") in session_read
    assert statements_naming(queries, "auth_user") == [session_read]


def test_signing_in_writes_the_person_on_the_session_row_and_signing_out_removes_the_row(person):
    client = signed_in(person)
    row = Session.objects.get(session_key=client.session.session_key)
    assert row.user_id == person.pk
    assert row.get_decoded()[SESSION_KEY] == str(person.pk)
    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=row.session_key).exists()


def test_an_anonymous_session_has_no_person(client, event):
    assert client.put(f"/api/me/saved/{event.public_id}").status_code == 201
    assert Session.objects.get(session_key=client.session.session_key).user_id is None


def test_a_password_changed_elsewhere_still_ends_the_session(person):
    client = signed_in(person)
    assert client.get(MINE).status_code == 200
    person.set_password("another-long-pass-2027")
    person.save()
    assert client.get(MINE).status_code == 401


def test_a_deactivated_account_is_signed_out(person):
    client = signed_in(person)
    assert client.get(MINE).status_code == 200
    type(person).objects.filter(pk=person.pk).update(is_active=False)
    assert client.get(MINE).status_code == 401


def test_a_row_whose_person_column_disagrees_is_read_the_way_django_reads_it(person, event):
    """A row saved without the column (or naming someone else) is not trusted: the session's own
    user id decides, read the usual way."""
    client = signed_in(person)
    assert client.put(f"/api/me/saved/{event.public_id}").status_code == 201
    other = UserFactory(username="mallory")
    Session.objects.filter(session_key=client.session.session_key).update(user=other)
    assert saved_ids(client) == [event.public_id]
    with CaptureQueriesContext(connection) as queries:
        client.get("/api/me/saved")
    users = statements_naming(queries, "auth_user")
    assert len(users) == 2  # the joined read (mallory, ignored), then carol by the session's own id
    Session.objects.filter(session_key=client.session.session_key).update(user=None)
    assert saved_ids(client) == [event.public_id]


def test_deleting_a_person_deletes_their_sessions(person):
    client = signed_in(person)
    key = client.session.session_key
    person.delete()
    assert not Session.objects.filter(session_key=key).exists()
