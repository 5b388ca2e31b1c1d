"""The test database made once per state of the schema, then copied; and what `post_migrate` writes
after a flush replayed rather than recomputed.

Creating a test database runs every migration and the `post_migrate` handlers: about five seconds of
one core on either database, in each pytest-xdist worker and again in every run. The
database that comes out depends only on the migrations, the handlers and the installed packages, so
the first worker that makes it keeps a copy, named by a digest of those files, and every later
creation with the same digest copies it instead. A change to any of them makes a new digest: the
database is migrated again and the new copy kept.
- SQLite: the copy is a file, `TEMPLATES/<key>.sqlite3`.
- PostgreSQL (DATABASE_URL): the copy is a database on the same server, `test_template_<key>`, which
  nothing connects to; a test database is made from it by `CREATE DATABASE … TEMPLATE` (Django's
  own `TEST["TEMPLATE"]`, as it clones databases for its parallel runner). Copies of older digests are
  dropped when a new one is kept (one still in use by another run stays, and goes next time).

A transactional test (a live server, `transaction=True`) ends with Django's `flush`, which empties every
table and then runs the `post_migrate` handlers again on the empty database: content types,
permissions, the managers' group, the periodic tasks queued. That is 0.2 s a test, almost all of it
`create_permissions`. The handlers write the same rows every time on an empty database, so the first
flush of a session runs them and keeps what they wrote, and every later one inserts those rows back
(and clears the content types' cache, as the handlers do): on PostgreSQL with `COPY`, in its text
form, which gives back every column type as it was. The flush of a test's end keeps the sequences
(`reset_sequences=False`), so the rows put back never meet an id handed out later. On PostgreSQL the
flush itself deletes each table's rows rather than truncating them (`_deleting`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.commands import flush
from django.db import DatabaseError, connections, transaction
from django.db.backends.postgresql.creation import DatabaseCreation as PostgresCreation
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from django.db.backends.sqlite3.creation import DatabaseCreation

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / ".test-db-templates"
#: What the migrated database depends on: the migrations, what runs after `migrate` (the apps'
#: `ready()` and their signal handlers, the tasks they queue), the settings, and the locked packages.
INPUTS = ("*/migrations/*.py", "*/apps.py", "*/signals.py", "*/tasks.py", "config/settings.py", "uv.lock")


def template_key() -> str:
    digest = hashlib.sha256()
    for path in sorted({path for pattern in INPUTS for path in ROOT.glob(pattern)}):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _copy(source: str | Path, target: Path) -> None:
    """A consistent copy of the database `source` (WAL included) through SQLite's backup API, written
    beside `target` and moved into place: a reader never sees half a file."""
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".partial")
    os.close(handle)
    with sqlite3.connect(source) as origin, sqlite3.connect(partial) as copy:
        origin.backup(copy)
    os.replace(partial, target)


def install() -> None:
    """Make each backend's test database creation copy the kept template when there is one, and keep
    one when there is not (for the session: pytest's own process, or each xdist worker); and replay
    what a flush's `post_migrate` handlers write."""
    DatabaseCreation.create_test_db = _from_sqlite_template(DatabaseCreation.create_test_db)  # type: ignore[method-assign]
    PostgresCreation.create_test_db = _from_postgres_template(PostgresCreation.create_test_db)  # type: ignore[method-assign]
    PostgresOperations.sql_flush = _deleting(PostgresOperations.sql_flush)  # type: ignore[method-assign]
    flush.emit_post_migrate_signal = _replayed(flush.emit_post_migrate_signal)


def _switch_to(creation, name: str) -> str:
    """What Django's `create_test_db` does once the test database `name` exists: point the connection
    (and the settings) at it."""
    creation.connection.close()
    settings.DATABASES[creation.connection.alias]["NAME"] = name
    creation.connection.settings_dict["NAME"] = name
    creation.connection.ensure_connection()
    return name


def _from_sqlite_template(original):
    """`create_test_db` for SQLite: a copy of `TEMPLATES/<key>.sqlite3` when that file exists;
    otherwise Django's migration, then the copy kept."""
    template = TEMPLATES / f"{template_key()}.sqlite3"

    def create_test_db(self, verbosity=1, autoclobber=False, serialize=None, keepdb=False):
        name = self._get_test_db_name()
        if keepdb or serialize or self.is_in_memory_db(name):
            return original(self, verbosity, autoclobber, serialize, keepdb)
        if not template.exists():
            created = original(self, verbosity, autoclobber, serialize, keepdb)
            TEMPLATES.mkdir(exist_ok=True)
            self.connection.close()
            _copy(created, template)
            return created
        self._create_test_db(verbosity, autoclobber=True, keepdb=False)  # an old file of the name goes
        shutil.copyfile(template, name)
        return _switch_to(self, name)

    return create_test_db


POSTGRES_TEMPLATE_PREFIX = "test_template_"


def _from_postgres_template(original):
    """`create_test_db` for PostgreSQL: `CREATE DATABASE … TEMPLATE test_template_<key>` when that
    database exists; otherwise Django's migration, then the copy kept (under a name of its own first,
    renamed once complete, so no run copies half a database; two workers racing keep one)."""
    template = POSTGRES_TEMPLATE_PREFIX + template_key()

    def create_test_db(self, verbosity=1, autoclobber=False, serialize=None, keepdb=False):
        if keepdb or serialize:
            return original(self, verbosity, autoclobber, serialize, keepdb)
        with self._nodb_cursor() as cursor:
            kept = self._database_exists(cursor, template)
        if not kept:
            created = original(self, verbosity, autoclobber, serialize, keepdb)
            self.connection.close()
            _keep_postgres_template(self, source=created, template=template)
            self.connection.ensure_connection()
            return created
        name = self._get_test_db_name()
        test_settings = self.connection.settings_dict["TEST"]
        before = test_settings.get("TEMPLATE")
        test_settings["TEMPLATE"] = template
        try:
            self._create_test_db(verbosity, autoclobber=True, keepdb=False)  # an old one of the name goes
        finally:
            test_settings["TEMPLATE"] = before
        return _switch_to(self, name)

    return create_test_db


def _keep_postgres_template(creation, *, source: str, template: str) -> None:
    """Copy the freshly migrated `source` as `template`, and drop the templates of other digests."""
    quote = creation.connection.ops.quote_name
    partial = f"{template}_{os.getpid()}"
    with creation._nodb_cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {quote(partial)} TEMPLATE {quote(source)}")
        try:
            cursor.execute(f"ALTER DATABASE {quote(partial)} RENAME TO {quote(template)}")
        except DatabaseError:  # another worker kept the same copy first
            cursor.execute(f"DROP DATABASE {quote(partial)}")
        cursor.execute(
            "SELECT datname FROM pg_catalog.pg_database WHERE datname ~ %s AND datname <> %s",
            [f"^{POSTGRES_TEMPLATE_PREFIX}[0-9a-f]{{16}}$", template],  # kept copies, not partial ones
        )
        for (older,) in cursor.fetchall():
            # One in use by a run of an older checkout stays: it goes next time.
            with contextlib.suppress(DatabaseError):
                cursor.execute(f"DROP DATABASE {quote(older)}")


def _deleting(sql_flush):
    """PostgreSQL's `sql_flush` for a test's flush, which keeps the sequences: a `DELETE` per table
    rather than one `TRUNCATE` of all of them, which gives every table and index a new file: 0.35 s
    of the server's for the 43 tables, a few milliseconds for the few rows a test leaves. Every foreign
    key is deferred to the commit (Django makes them so), when all the tables are empty."""

    def flush_statements(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences:
            return sql_flush(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
            for table in tables
        ]

    return flush_statements


Replay = Callable[[Any, Any], None]  # (connection, cursor): the rows put back


def _replayed(emit):
    """`emit_post_migrate_signal` for `flush`: the handlers once per database, then their rows."""
    written: dict[str, Replay] = {}

    def emit_post_migrate_signal(verbosity, interactive, db, **kwargs):
        connection = connections[db]
        if connection.vendor not in ("sqlite", "postgresql") or kwargs:
            return emit(verbosity, interactive, db, **kwargs)
        if db not in written:
            emit(verbosity, interactive, db, **kwargs)
            written[db] = _copied(connection) if connection.vendor == "postgresql" else _rows(connection)
            return None
        with transaction.atomic(using=db), connection.cursor() as cursor:
            written[db](connection, cursor)
        from django.contrib.contenttypes.models import ContentType

        ContentType.objects.clear_cache()
        return None

    return emit_post_migrate_signal


def _rows(connection) -> Replay:
    """Every row of the tables `flush` empties (right after it and the handlers: what they wrote),
    and how to insert them back."""
    found: list[tuple[str, list[str], list[tuple]]] = []  # (table, columns, rows)
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.django_table_names(only_existing=True)):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows = cursor.fetchall()
            if rows:
                found.append((table, [column[0] for column in cursor.description], rows))

    def insert_back(connection, cursor) -> None:
        for table, columns, rows in found:
            names = ", ".join(connection.ops.quote_name(column) for column in columns)
            marks = ", ".join("%s" for _ in columns)
            sql = f"INSERT INTO {connection.ops.quote_name(table)} ({names}) VALUES ({marks})"
            cursor.executemany(sql, rows)

    return insert_back


def _copied(connection) -> Replay:
    """`_rows` on PostgreSQL: each table's rows as `COPY … TO STDOUT` writes them, put back by
    `COPY … FROM STDIN`."""
    found: list[tuple[str, bytes]] = []  # (table, its rows in COPY's text form)
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.django_table_names(only_existing=True)):
            with cursor.cursor.copy(f"COPY {connection.ops.quote_name(table)} TO STDOUT") as copy:
                data = b"".join(bytes(chunk) for chunk in copy)
            if data:
                found.append((table, data))

    def copy_back(connection, cursor) -> None:
        for table, data in found:
            with cursor.cursor.copy(f"COPY {connection.ops.quote_name(table)} FROM STDIN") as copy:
                copy.write(data)

    return copy_back
