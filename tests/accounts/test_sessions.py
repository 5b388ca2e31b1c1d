"""Sessions are Django's own (`cached_db`: the database, read through the default cache), and Django's
own checks of the person still decide who is signed in; a person's sessions end with their account
(accounts/sessions.py)."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session
from django.core.cache import caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.sessions import end_sessions
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


@pytest.fixture
def person():
    user = UserFactory(username="carol")
    user.set_password(PASSWORD)
    user.save()
    return user


def statements_naming(queries: CaptureQueriesContext, table: str) -> list[str]:
    quoted = connection.ops.quote_name(table)
    return [query["sql"] for query in queries.captured_queries if quoted in query["sql"]]


def cached(key: str) -> bool:
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
    return caches[settings.SESSION_CACHE_ALIAS].get(store.cache_key) is not None


def test_a_signed_in_request_reads_its_session_from_the_cache_and_its_person_once(person):
    client = signed_in(person)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/me/saved")
    assert response.status_code == 200
    assert statements_naming(queries, "django_session") == []
    assert len(statements_naming(queries, "auth_user")) == 1


def test_a_session_missing_from_the_cache_is_read_from_the_database(person):
    client = signed_in(person)
    caches[settings.SESSION_CACHE_ALIAS].clear()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(MINE).status_code == 200
    assert len(statements_naming(queries, "django_session")) == 1
    assert cached(client.session.session_key)


def test_signing_in_names_the_person_in_the_session_and_signing_out_removes_it(person):
    client = signed_in(person)
    key = client.session.session_key
    row = Session.objects.get(session_key=key)
    assert row.get_decoded()[SESSION_KEY] == str(person.pk)
    assert cached(key)
    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=key).exists()
    assert not cached(key)
    assert client.get(MINE).status_code == 401


def test_an_anonymous_session_has_no_person(client, event):
    assert client.put(f"/api/me/saved/{event.public_id}").status_code == 201
    assert SESSION_KEY not in Session.objects.get(session_key=client.session.session_key).get_decoded()


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


def test_deleting_a_person_deletes_their_sessions(person):
    client = signed_in(person)
    other = signed_in(UserFactory(username="dave", password=PASSWORD))
    key = client.session.session_key
    person.delete()
    assert not Session.objects.filter(session_key=key).exists()
    assert not cached(key)
    assert other.get(MINE).status_code == 200  # only theirs


def test_ending_a_persons_sessions_ends_each_of_them_and_no_one_elses(person):
    first, second = signed_in(person), signed_in(person)
    other = signed_in(UserFactory(username="erin", password=PASSWORD))
    assert end_sessions(person.pk) == 2
    assert first.get(MINE).status_code == 401 and second.get(MINE).status_code == 401
    assert other.get(MINE).status_code == 200
