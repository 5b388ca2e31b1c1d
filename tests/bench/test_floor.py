"""The bench's floor view (bench/urls.py) is the fair ceiling only while it sends the search
endpoint's own statement and answers its bytes: both are checked here, on the test database."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from events.choices import Level, Location, Price
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
QUERY = "location=taipei&price=free&level=beginner"


@pytest.fixture(autouse=True)
def bench_urls(settings):
    settings.ROOT_URLCONF = "bench.urls"


def _statements(client: Client, url: str) -> tuple[bytes, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    # The one thing that differs: the time the request took as "now".
    moments = re.compile(r"'\d{4}-\d\d-\d\d[ T][\d:.]+(\+00:00)?'(::timestamptz)?")
    sql = [moments.sub("NOW", query["sql"]) for query in queries.captured_queries]
    # Left out: the call's Activity row and its day count, which the tests write at once in a savepoint
    # of their own (the site writes them off the request, in batches).
    return response.content, [
        statement
        for statement in sql
        if "events_activity" not in statement and not statement.startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
    ]


@pytest.mark.parametrize("matching", [12, 0], ids=["a full page", "nothing matches"])
def test_the_floor_sends_the_search_endpoints_statement_and_answers_its_bytes(matching):
    EventFactory.create_batch(matching, location=Location.TAIPEI, price=Price.FREE, level=Level.BEGINNER)
    EventFactory(location=Location.ONLINE)
    client = Client()

    api_body, api_sql = _statements(client, f"/api/events?{QUERY}")
    floor_body, floor_sql = _statements(client, f"/bench/floor?{QUERY}")

    assert len(floor_sql) == 1 and api_sql[0] == floor_sql[0]
    if matching:  # the bench's search; the floor leaves out the fields of an empty answer
        assert floor_body == api_body
        assert len(api_sql) == 1  # the ETag's revision came with the page
    else:  # no row to bring the revision: the API reads it alone, for its ETag
        assert len(api_sql) == 2 and api_sql[1].startswith("SELECT (SELECT MAX(")
