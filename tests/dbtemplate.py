"""The SQLite test database made once per state of the schema, then copied; and what `post_migrate`
writes after a flush replayed rather than recomputed.

Creating a test database runs every migration and the `post_migrate` handlers: about seven seconds of
one core on this machine, in each pytest-xdist worker and again in every run. The database that comes
out depends only on the migrations, the handlers and the installed packages, so the first worker that
makes it keeps a copy (`TEMPLATES/<key>.sqlite3`, the key a digest of those files), and every later
creation with the same key copies that file instead. A change to any of them makes a new key: the
database is migrated again and the new copy kept. PostgreSQL (DATABASE_URL) is left to Django.

A transactional test (a live server, `transaction=True`) ends with Django's `flush`, which empties every
table and then runs the `post_migrate` handlers again on the empty database: content types,
permissions, the managers' group, the periodic tasks queued. That is 0.2 s a test, almost all of it
`create_permissions`. The handlers write the same rows every time on an empty database, so the first
flush of a session runs them and keeps what they wrote, and every later one inserts those rows back
(and clears the content types' cache, as the handlers do).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management.commands import flush
from django.db import connections, transaction
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
    """Make SQLite's test database creation copy the kept template when there is one, and keep one
    when there is not (for the session: pytest's own process, or each xdist worker)."""
    original = DatabaseCreation.create_test_db
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
        self.connection.close()
        settings.DATABASES[self.connection.alias]["NAME"] = name
        self.connection.settings_dict["NAME"] = name
        self.connection.ensure_connection()
        return name

    DatabaseCreation.create_test_db = create_test_db  # type: ignore[method-assign]
    flush.emit_post_migrate_signal = _replayed(flush.emit_post_migrate_signal)


Rows = list[tuple[str, list[str], list[tuple]]]  # (table, columns, rows)


def _replayed(emit):
    """`emit_post_migrate_signal` for `flush`: the handlers once per database, then their rows."""
    written: dict[str, Rows] = {}

    def emit_post_migrate_signal(verbosity, interactive, db, **kwargs):
        connection = connections[db]
        if connection.vendor != "sqlite" or kwargs:
            return emit(verbosity, interactive, db, **kwargs)
        if db not in written:
            emit(verbosity, interactive, db, **kwargs)
            written[db] = _rows(connection)
            return None
        with transaction.atomic(using=db), connection.cursor() as cursor:
            for table, columns, rows in written[db]:
                names = ", ".join(connection.ops.quote_name(column) for column in columns)
                marks = ", ".join("%s" for _ in columns)
                cursor.executemany(
                    f"INSERT INTO {connection.ops.quote_name(table)} ({names}) VALUES ({marks})", rows
                )
        from django.contrib.contenttypes.models import ContentType

        ContentType.objects.clear_cache()
        return None

    return emit_post_migrate_signal


def _rows(connection) -> Rows:
    """Every row of the tables `flush` empties (right after it and the handlers: what they wrote)."""
    found: Rows = []
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.django_table_names(only_existing=True)):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows = cursor.fetchall()
            if rows:
                found.append((table, [column[0] for column in cursor.description], rows))
    return found
