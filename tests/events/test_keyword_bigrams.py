"""Keyword search through the bigram index (migration 0012) answers exactly what the plain LIKE over title
and summary answers, for words of every length, on SQLite and PostgreSQL; on PostgreSQL a
two-character word is found through the index, and every way of writing an event keeps it current."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.db import connection
from django.db.models import Q

from core.visitors import Visitor
from events.models import Event
from events.selectors import search_events
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

#: (title, summary): mixed case, punctuation, LIKE's own characters, full-width and accented letters,
#: characters whose upper case is another (ß, ǅ, ı), emoji, single characters, and a pair that exists
#: only across the two fields ("…Q" + "Z…").
TEXTS = [
    ("AI 講座：入門", "台北 meetup for UX people"),
    ("Tailwind 工作坊", "e-mail templates, maIn ideas"),
    ("ÉCOLE d'été", "straße, Maße und ß"),
    ("50% off_now", "back\\slash and \\n, 100%_done"),
    ("ＡＩ全形與ａｉ", "🎉 party x🎉 y"),
    ("ends with Q", "Zebra starts here"),
    ("量子計算 Rustacean 小聚", "每個資料集都一樣多的關鍵字活動。"),
    ("ǅungla ǆ", "İstanbul ıi"),
    ("x", "y"),
    ("  spaced  out  ", "tab\there, new\nline"),
    ("台北講座", "座"),
    ("Vr Vision", "vR and VR"),
]

WORDS = [
    # one character
    *["a", "A", "講", "座", "%", "_", "\\", " ", "ß", "x", "🎉", "é", "ǆ"],
    # two characters
    *["ai", "AI", "Ai", "aI", "講座", "台北", "ux", "UX", "vr", "VR", "éc", "ÉC", "ÉT", "ßa", "SS"],
    *["% ", "%_", "f_", "\\n", "\\s", "a ", " a", "  ", "：入", "ＡＩ", "ａｉ", "ǅu", "İs", "ıi"],
    *["🎉 ", "x🎉", "QZ", "Q ", "Ze", "x\n", "\tt", "e\n", "\nl", "ЖЖ"],
    # three characters or more
    *["Rustacean", "rustacean", "量子計算", "工作坊", "a b", "AI 講座", "%_d", "off_now"],
    *["ends with Q Zebra", "straße", "STRASSE", "ǅungla", "x🎉 y", "no such words"],
]


@contextmanager
def planner(**flags: str):
    """PostgreSQL's planner switches for this transaction only, put back afterwards; nothing elsewhere."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        for name, value in flags.items():
            cursor.execute(f"SET LOCAL {name} = {value}")
        try:
            yield
        finally:
            for name in flags:
                cursor.execute(f"SET LOCAL {name} = DEFAULT")


def plain_like(word: str) -> set[int]:
    """The search as it was before any index: a LIKE over each field, every row read."""
    rows = Event.objects.filter(Q(title__icontains=word) | Q(summary__icontains=word))
    with planner(enable_indexscan="off", enable_bitmapscan="off"):
        return set(rows.values_list("pk", flat=True))


def indexed(word: str) -> set[int]:
    """`matching`, with the indexes taken wherever PostgreSQL can take one (a tiny table is otherwise
    scanned, and the index would go untested)."""
    with planner(enable_seqscan="off"):
        return set(Event.objects.matching(word).values_list("pk", flat=True))


def test_matching_answers_as_the_plain_like_for_words_of_every_length():
    events = [EventFactory(title=title, summary=summary) for title, summary in TEXTS]
    answers = {word: (indexed(word), plain_like(word)) for word in WORDS}
    differ = {word: found for word, found in answers.items() if found[0] != found[1]}
    assert not differ, differ
    # Not vacuous: short and long words alike find events, and some find none.
    assert all(answers[word][0] for word in ("a", "座", "ai", "講座", "VR", "\\n", "%_", "Rustacean"))
    assert not answers["QZ"][0] and not answers["ends with Q Zebra"][0] and not answers["no such words"][0]
    assert answers["ai"][0] == {events[0].pk, events[1].pk}  # "AI 講座", "Tailwind … maIn"


def test_a_two_character_search_is_the_same_through_the_compiled_statement():
    """The API's search binds the word into a statement compiled once per shape (core/statements.py, with
    STATEMENT_CACHE_VERIFY in the tests): a two-character word gets the same SQL shape as a long one."""
    hit = EventFactory(title="台北 AI 講座", summary="s")
    EventFactory(title="Other", summary="nothing here")
    for word in ("講座", "ai", "台北 AI", "講"):
        result = search_events(visitor=Visitor(), query=word)
        assert [event.public_id for event in result.events] == [hit.public_id], word


def explain(word: str) -> str:
    sql, params = Event.objects.matching(word).order_by().values("pk").query.sql_with_params()
    with planner(enable_seqscan="off"), connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.postgres_only
@pytest.mark.parametrize("word", ["講座", "ai", "VR", "台北"])
def test_two_characters_use_the_bigram_index(word):
    if connection.vendor != "postgresql":
        pytest.skip("the bigram column and its index are PostgreSQL's; SQLite scans (correctly)")
    EventFactory(title="台北 AI 講座", summary="VR")
    assert "event_keyword_bigrams" in explain(word)


@pytest.mark.postgres_only
@pytest.mark.parametrize("word", ["講", "a", "工作坊", "Rustacean"])
def test_other_lengths_leave_the_bigram_condition_out_of_the_plan(word):
    """For one character or three and more, the probe is NULL and PostgreSQL folds the condition away
    while planning: nothing reads the column, and longer words keep the trigram indexes."""
    if connection.vendor != "postgresql":
        pytest.skip("the bigram column and its index are PostgreSQL's")
    EventFactory(title="Rustacean 工作坊 講", summary="a")
    shown = explain(word)
    assert "keyword_bigrams" not in shown, shown
    if len(word) >= 3:
        assert "event_title_trgm" in shown and "event_summary_trgm" in shown, shown


@pytest.mark.postgres_only
def test_every_way_of_writing_an_event_keeps_its_bigrams():
    """A save, `bulk_create` and `update()` (the admin saves; the bench and the demo bulk-create): the
    database computes the column, so a two-character search finds the new words and not the old."""
    if connection.vendor != "postgresql":
        pytest.skip("the bigram column is PostgreSQL's")
    saved = EventFactory(title="舊標題", summary="s")
    [bulk] = Event.objects.bulk_create([EventFactory.build(title="批次 VR", summary="s")])
    assert indexed("VR") == {bulk.pk}
    Event.objects.filter(pk=bulk.pk).update(summary="ux", title="改過")
    saved.title = "新講座"
    saved.save()
    assert indexed("VR") == set() and indexed("舊標") == set()
    assert indexed("講座") == {saved.pk} and indexed("UX") == {bulk.pk} and indexed("改過") == {bulk.pk}
