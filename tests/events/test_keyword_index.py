"""Keyword search on PostgreSQL can use the trigram indexes (migration 0006) for words of 3 or more
characters, Chinese included; the answers are the same with or without them."""

import pytest
from django.db import connection

from events.models import Event
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def plan(word: str) -> str:
    sql, params = Event.objects.matching(word).order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a tiny table would be scanned anyway
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.postgres_only
@pytest.mark.parametrize("word", ["Django", "工作坊"])
def test_three_characters_or_more_use_the_trigram_indexes(word):
    if connection.vendor != "postgresql":
        pytest.skip("pg_trgm is PostgreSQL's; SQLite scans (correctly)")
    EventFactory(title="Django 工作坊", summary="x")
    shown = plan(word)
    assert "event_title_trgm" in shown and "event_summary_trgm" in shown, shown


@pytest.mark.parametrize("word", ["Django", "工作坊", "AI", "台北"])
def test_matching_is_the_same_answer_for_short_and_long_words(word):
    hit = EventFactory(title=f"{word} meetup", summary="s")
    EventFactory(title="Other", summary="nothing here")
    assert list(Event.objects.matching(word.lower() if word.isascii() else word)) == [hit]
