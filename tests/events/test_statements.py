"""core/statements.py: a statement compiled once per shape gives exactly what the ORM gives, and a
shape whose values it cannot place is left to the ORM."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.statements import PREPARE_AFTER, StatementCache, StatementMismatch, compile_shape
from core.visitors import Visitor
from events.models import Event
from events.selectors import MAX_CACHED_OFFSET, SUMMARY_PAGE, _summary_page, search_events
from tests.factories import EventFactory, SavedEventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TRICKY = ["Django", "100%", "10_%", "back\\slash", "工作坊", "%", "_", "a'b", 'quote"d']


@pytest.fixture
def catalogue():
    start = timezone.now() + timedelta(days=2)
    titles = ["Django 100% live", "10_% off workshop", "back\\slash talk", "WebMCP 工作坊", "a'b meetup"]
    events = [
        EventFactory(
            title=title,
            starts_at=start + timedelta(hours=n),
            location=("taipei", "online")[n % 2],
            level=("beginner", "advanced")[n % 2],
        )
        for n, title in enumerate(titles * 3)
    ]
    user = UserFactory()
    for event in events[::4]:
        SavedEventFactory(user=user, event=event)
    return user


#: Any character a keyword can reach the use case with: the input serializer refuses NUL (DRF's
#: ProhibitNullCharactersValidator) before any search, and PostgreSQL text cannot hold it; a lone
#: surrogate is no text a request carries (a query string is decoded as UTF-8, replacing what is not;
#: the MCP's JSON parser refuses it) and cannot be encoded to send to PostgreSQL.
KEYWORD_CHARACTERS = st.characters(exclude_characters="\x00", exclude_categories=["Cs"])


def orm_rows(shape, values):
    return list(_summary_page(shape, values))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.one_of(st.none(), st.sampled_from(TRICKY), st.text(KEYWORD_CHARACTERS, min_size=1, max_size=6)),
    location=st.sampled_from([None, "taipei", "online"]),
    level=st.sampled_from([None, "beginner", "advanced"]),
    limit=st.integers(1, 6),
    offset=st.integers(0, 16),
    saved_by=st.booleans(),
    with_revision=st.booleans(),
)
def test_the_compiled_statement_answers_what_the_orm_answers(
    catalogue, query, location, level, limit, offset, saved_by, with_revision
):
    values = {"now": timezone.now()}
    for name, value in (("query", query), ("location", location), ("level", level)):
        if value:
            values[name] = value
    owner = ("user_id", catalogue.pk) if saved_by else None
    if owner:
        values["owner"] = owner[1]
    shape = (limit, offset, owner[0] if owner else None, with_revision)
    assert SUMMARY_PAGE.rows(shape, values) == orm_rows(shape, values)


def test_like_patterns_are_escaped_as_the_orm_escapes_them(catalogue):
    now = timezone.now()
    shape = (10, 0, None, False)
    for query, expected in (("100%", 3), ("10_%", 3), ("back\\slash", 3), ("%", 6), ("0_", 3)):
        rows = SUMMARY_PAGE.rows(shape, {"now": now, "query": query})
        assert len(rows) == expected, query
        assert all(query in row.title for row in rows)


def test_one_statement_and_rows_named_like_values_list(catalogue):
    with CaptureQueriesContext(connection) as captured:
        rows = SUMMARY_PAGE.rows((5, 0, "user_id", False), {"now": timezone.now(), "owner": catalogue.pk})
    assert len(captured) == 1
    first = rows[0]
    assert first._fields == (
        "public_id",
        "title",
        "summary",
        "starts_at",
        "location",
        "price",
        "level",
        "visitor_saved",
        "total_matching",
    )
    assert first.starts_at.tzinfo is not None and first.total_matching == 15
    assert first.visitor_saved is True  # the first event was saved


def test_a_value_used_in_a_way_it_cannot_place_is_left_to_the_orm(catalogue):
    def shouting(shape, values):  # the value reaches the statement changed: not one of the known ways
        return Event.objects.filter(title__istartswith=values["word"][:3].upper()).values_list("title")

    assert compile_shape(shouting, (), {"word": "django"}, connection) is None
    cache = StatementCache(shouting)
    assert cache.rows((), {"word": "djangoX"}) == [("Django 100% live",)] * 3


def test_verification_catches_a_build_whose_sql_depends_on_a_value(catalogue):
    def careless(shape, values):  # the SQL changes with the value: `shape` should have said so
        events = Event.objects.all()
        if values["word"].startswith("D"):
            events = events.filter(level="beginner")
        return events.filter(title__icontains=values["word"]).values_list("title")

    cache = StatementCache(careless)
    cache.rows((), {"word": "meetup"})
    with pytest.raises(StatementMismatch):
        cache.rows((), {"word": "Django"})


def test_deep_pages_are_left_to_the_orm_and_take_no_place_in_the_cache(catalogue):
    search_events(visitor=Visitor(), offset=1)
    compiled = len(SUMMARY_PAGE._compiled)
    for offset in range(MAX_CACHED_OFFSET + 1, MAX_CACHED_OFFSET + 4):
        assert search_events(visitor=Visitor(), offset=offset).total == 15
    assert len(SUMMARY_PAGE._compiled) == compiled


@pytest.mark.parametrize("query", [None, "Django", "10_%", "工作坊", "%"])
@pytest.mark.parametrize("saved_by", [False, True])
@pytest.mark.parametrize("with_revision", [False, True])
def test_the_production_path_without_verification_answers_what_the_orm_answers(
    settings, catalogue, query, saved_by, with_revision
):
    """What the site runs: the cached statement alone, never compared with the ORM as it runs."""
    settings.STATEMENT_CACHE_VERIFY = False
    values = {"now": timezone.now(), **({"query": query} if query else {})}
    owner = ("user_id", catalogue.pk) if saved_by else None
    if owner:
        values["owner"] = owner[1]
    shape = (5, 0, owner[0] if owner else None, with_revision)
    first = SUMMARY_PAGE.rows(shape, values)  # compiles the shape
    assert first == orm_rows(shape, values)
    assert SUMMARY_PAGE.rows(shape, values) == first  # and then only binds its values


def test_with_the_cache_off_the_orm_compiles_every_call(settings, catalogue):
    """`STATEMENT_CACHE=0` (the bench's A/B): the same rows, and no shape is compiled or kept."""
    settings.STATEMENT_CACHE = False
    values = {"now": timezone.now(), "query": "Django"}
    shape = (5, 0, None, False)
    cache = StatementCache(SUMMARY_PAGE.build)
    assert cache.rows(shape, values) == orm_rows(shape, values)
    assert cache._compiled == {}


def test_with_the_cache_off_a_selector_of_plain_tuples_gets_named_rows(settings, catalogue):
    """A build of plain `values_list` rows (the seat ledger's) gets the named rows a compiled
    statement gives, whether the shape is compiled or left to the ORM."""
    event = Event.objects.first()

    def plain(shape, values):
        return Event.objects.filter(pk=values["pk"]).values_list("public_id", "capacity")

    compiled = StatementCache(plain).rows((), {"pk": event.pk})
    settings.STATEMENT_CACHE = False
    [row] = StatementCache(plain).rows((), {"pk": event.pk})
    assert [row] == compiled and row._asdict() == {"public_id": event.public_id, "capacity": event.capacity}


def test_on_postgresql_a_statement_run_again_and_again_is_prepared_and_still_answers_the_same(catalogue):
    """The cached statements are sent with server-side binding, and prepared once they have run
    PREPARE_AFTER times on the connection (PostgreSQL plans them once); Django's own statements on
    the same connection stay unprepared. The rows are the same every time."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's; SQLite runs the statement as it is")
    values = {"now": timezone.now(), "query": "Django"}
    shape = (5, 0, None, False)
    expected = orm_rows(shape, values)

    def prepared() -> list[str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            return [row[0] for row in cursor.fetchall()]

    answers = [SUMMARY_PAGE.rows(shape, values) for _ in range(PREPARE_AFTER + 1)]
    assert all(answer == expected for answer in answers)
    sql = SUMMARY_PAGE._compiled[("postgresql", "default", shape, ("now", "query"))].sql
    assert [statement for statement in prepared() if statement.startswith(sql[:60])]
    assert any("$1" in statement for statement in prepared())
    with CaptureQueriesContext(connection) as captured:  # still logged as any statement is
        assert SUMMARY_PAGE.rows(shape, values) == expected
    assert len(captured) == 1
    for _ in range(PREPARE_AFTER + 1):  # Django's own: never prepared
        Event.objects.filter(title__contains="never-prepared").count()
    assert not [statement for statement in prepared() if "never-prepared" in statement]
