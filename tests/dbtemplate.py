"""The SQLite test database made once per state of the schema, then copied.

Creating a test database runs every migration and the `post_migrate` handlers: about seven seconds of
one core on this machine, in each pytest-xdist worker and again in every run. The database that comes
out depends only on the migrations, the handlers and the installed packages, so the first worker that
makes it keeps a copy (`TEMPLATES/<key>.sqlite3`, the key a digest of those files), and every later
creation with the same key copies that file instead. A change to any of them makes a new key: the
database is migrated again and the new copy kept. PostgreSQL (DATABASE_URL) is left to Django.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from django.conf import settings
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
