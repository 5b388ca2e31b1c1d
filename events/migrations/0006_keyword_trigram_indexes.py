"""Keyword search that scales on PostgreSQL: trigram GIN indexes on the expressions `query` filters by.

`EventQuerySet.matching` is `icontains` on title and summary, which PostgreSQL runs as
`UPPER(col::text) LIKE UPPER('%word%')`; pg_trgm indexes those expressions for words of 3 characters or
more, Chinese included. Shorter words, and SQLite, keep the plain scan (still correct). Nothing happens
on other databases.
"""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

INDEXES = {
    "event_title_trgm": "title",
    "event_summary_trgm": "summary",
}


def create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, column in INDEXES.items():
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS {name} ON events_event USING gin ((UPPER("{column}"::text)) gin_trgm_ops)'
        )


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("events", "0005_activity_dashboard_indexes")]

    operations = [TrigramExtension(), migrations.RunPython(create, drop)]
