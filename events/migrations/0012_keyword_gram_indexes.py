"""Keyword search that scales for two-character words, on PostgreSQL: a GIN index of the character pairs
of `UPPER(title)` and `UPPER(summary)`.

Two-character words (台北, 講座, AI, UX) are the commonest searches in Chinese, and the trigram indexes
of 0006 cannot serve them: pg_trgm draws no trigram from them, so they were a scan of every event.
PostgreSQL's stock extensions have no bigram index, so the pairs are a column of our own,
`keyword_bigrams`: the distinct 2-character substrings of `UPPER(title)` and of `UPPER(summary)` (none
across the two), computed by `events_keyword_bigrams`. It is a generated column: the database fills it
on every insert and update, whatever wrote the row (a model save, the admin, `bulk_create`, `update()`,
raw SQL), with the same `UPPER` the search's `LIKE` folds with, so no write path can forget it and no
case folding can differ; adding it fills it for the rows already there. It is stored rather than an
expression index because a plan that does not use the index (a common word read in start order, or a
scan) evaluates the condition row by row, and computing the pairs there cost far more than the scan.
The model does not declare it (SQLite has no array column); `EventQuerySet.matching` names it.

`events_keyword_probe(word)` is the pair a two-character word must find (the word itself, folded by
the caller), and NULL for any other length, whose condition PostgreSQL then folds away when it plans
the statement: longer words are left to the trigram indexes, single characters to the LIKEs (a scan,
as before). `matching` asks `probe IS NULL OR keyword_bigrams @> probe` beside the LIKEs, which stay
the exact check.

PostgreSQL refuses to change the type of a column a generated column reads: a later migration that
alters `title` or `summary` (their `max_length`, say) drops `keyword_bigrams` first and adds it again
after, as below. Nothing happens on other databases (SQLite scans, correctly).
"""

from django.db import migrations

FUNCTIONS = (
    """
    CREATE OR REPLACE FUNCTION events_keyword_bigrams(VARIADIC texts text[]) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN ARRAY(
            SELECT DISTINCT substr(field, start, 2)
            FROM unnest(texts) AS field, generate_series(1, char_length(field) - 1) AS start
        )
    """,
    """
    CREATE OR REPLACE FUNCTION events_keyword_probe(word text) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN CASE WHEN char_length(word) = 2 THEN ARRAY[word] END
    """,
)
COLUMN = """
    ALTER TABLE events_event ADD COLUMN keyword_bigrams text[]
        GENERATED ALWAYS AS (events_keyword_bigrams(UPPER(title::text), UPPER(summary::text))) STORED
"""
INDEX = "CREATE INDEX event_keyword_bigrams ON events_event USING gin (keyword_bigrams)"


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in (*FUNCTIONS, COLUMN, INDEX):
        schema_editor.execute(statement)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("ALTER TABLE events_event DROP COLUMN IF EXISTS keyword_bigrams")  # its index too
    schema_editor.execute("DROP FUNCTION IF EXISTS events_keyword_probe(text)")
    schema_editor.execute("DROP FUNCTION IF EXISTS events_keyword_bigrams(text[])")


class Migration(migrations.Migration):
    dependencies = [("events", "0011_merge_reminders_calendar_feeds")]

    operations = [migrations.RunPython(create, drop)]
