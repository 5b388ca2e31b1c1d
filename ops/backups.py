"""Backups of the site's database that restore (`manage.py backup`, `manage.py restore`; `make backup`,
`make restore FILE=…`).

One file per backup, of the kind of database `DATABASE_URL` names: PostgreSQL's own custom-format dump
(`pg_dump -Fc`, by the client whose major version is the server's, so the dump is neither refused nor
missing what the server has), or a copy of the SQLite file through SQLite's online backup API (a
consistent snapshot while the site and the worker go on writing). A restore goes only into an empty
database of the same kind, all or nothing: `pg_restore` in one transaction, stopping at the first
error, or the backup API into the target file. The backup holds Django's migration records, so the
restored site needs no step of its own: `migrate` finds nothing to apply when the code is the
revision the backup was made by.

A backup holds what the database holds (password hashes, ticket codes, token digests): the file is
made readable by its owner only. The database's password reaches the PostgreSQL clients through
`PGPASSWORD`, never their arguments, and no message carries it.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.executor import MigrationExecutor
from psycopg import conninfo, pq

#: The first bytes of each kind of backup file: pg_dump's custom format, an SQLite database.
MAGIC = {"postgresql": b"PGDMP", "sqlite": b"SQLite format 3\x00"}
SUFFIX = {"postgresql": ".dump", "sqlite": ".sqlite3"}
NAMES = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}

#: libpq connection parameters that are secrets: never on a command line (a process list shows it).
SECRET_PARAMETERS = {"password", "sslpassword", "oauth_client_secret", "scram_client_key", "scram_server_key"}


class BackupError(Exception):
    """A backup or a restore that was refused or failed; the message says why, with no password."""


@dataclass(frozen=True)
class Backup:
    path: Path
    kind: str
    tables: int
    size: int


@dataclass(frozen=True)
class Restored:
    kind: str
    tables: int
    #: Migrations of this code the backup has not applied, and applied ones this code does not have.
    unapplied: int
    unknown: int


def backup(*, directory: Path, using: str = "default", now: datetime | None = None) -> Backup:
    """Write a backup of the database `using` into `directory` (made if missing), named with the kind
    and the UTC time. It is written beside its final name and renamed when complete, so a file with a
    backup's name is always a whole backup."""
    connection = connections[using]
    kind = kind_of_database(connection)
    if kind == "sqlite" and not Path(connection.settings_dict["NAME"]).is_file():
        # Checked before connecting: Django's connection would make an empty file of it.
        raise BackupError(
            f"there is no SQLite database at {connection.settings_dict['NAME']}: nothing to back up"
        )
    tables = len(_tables(connection))
    partial = directory / f".{kind}-{os.getpid()}.partial"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Owner-only from its first byte: the clients write into the file made here.
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    except OSError as error:
        raise BackupError(f"cannot write a backup into {directory}: {error.strerror}") from error
    try:
        if kind == "postgresql":
            _run(connection, "pg_dump", "--format=custom", f"--file={partial}")
        else:
            _copy_sqlite(connection, partial)
        path = _publish(partial, directory, kind, now or datetime.now(UTC))
    finally:
        partial.unlink(missing_ok=True)
    return Backup(path=path, kind=kind, tables=tables, size=path.stat().st_size)


def restore(*, path: Path, using: str = "default") -> Restored:
    """Restore the backup at `path` into the database `using`, which must be empty and of the backup's
    kind; refused (nothing changed) otherwise. All of it or nothing is restored."""
    connection = connections[using]
    kind = kind_of_database(connection)
    found = kind_of_file(path)
    if found is None:
        raise BackupError(
            f"{path} is not a backup made by `manage.py backup` "
            "(neither a pg_dump custom-format file nor an SQLite database)"
        )
    if found != kind:
        raise BackupError(
            f"{path} is a {NAMES[found]} backup and DATABASE_URL names a {NAMES[kind]} database "
            f"({describe(connection)}): a backup restores only into a database of its kind"
        )
    tables = _tables(connection)
    if tables:
        raise BackupError(
            f"{describe(connection)} is not empty ({len(tables)} tables, e.g. {tables[0]}): "
            "a backup restores only into an empty database; nothing was changed"
        )
    if kind == "postgresql":
        _restore_postgresql(connection, path)
    else:
        _restore_sqlite(connection, path)
    unapplied, unknown = _migration_state(connection)
    return Restored(kind=kind, tables=len(_tables(connection)), unapplied=unapplied, unknown=unknown)


def kind_of_database(connection: BaseDatabaseWrapper) -> str:
    if connection.vendor not in MAGIC:
        raise BackupError(f"backups are made of PostgreSQL and SQLite databases, not {connection.vendor}")
    return connection.vendor


def kind_of_file(path: Path) -> str | None:
    """Which kind of backup the file is, read from its first bytes; None if neither."""
    try:
        with path.open("rb") as file:
            head = file.read(16)
    except OSError as error:
        raise BackupError(f"cannot read {path}: {error.strerror}") from error
    return next((kind for kind, magic in MAGIC.items() if head.startswith(magic)), None)


def describe(connection: BaseDatabaseWrapper) -> str:
    """The database as a message names it: its URL with the password masked, or the SQLite file."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"the SQLite database {db['NAME']}"
    user = f"{db.get('USER') or ''}{':***' if db.get('PASSWORD') else ''}"
    return f"postgres://{user}@{db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}/{db['NAME']}"


def masked(text: str, connection: BaseDatabaseWrapper) -> str:
    """`text` with the database's password, and any password in a URL, replaced by ***."""
    password = connection.settings_dict.get("PASSWORD")
    if password:
        text = text.replace(str(password), "***")
    return re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)


def _tables(connection: BaseDatabaseWrapper) -> list[str]:
    try:
        with connection.cursor() as cursor:
            return sorted(connection.introspection.table_names(cursor, include_views=True))
    except DatabaseError as error:
        raise BackupError(f"cannot read {describe(connection)}: {masked(str(error), connection)}") from error


def _publish(partial: Path, directory: Path, kind: str, now: datetime) -> Path:
    """Give the complete backup its name, never over another backup (two in one second get -2, -3…)."""
    stem = f"{kind}-{now.astimezone(UTC):%Y%m%dT%H%M%SZ}"
    for number in range(1, 100):
        path = directory / f"{stem}{f'-{number}' if number > 1 else ''}{SUFFIX[kind]}"
        try:
            os.link(partial, path)  # fails if the name is taken, where a rename would overwrite
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links: a rename, the name checked just before
            if path.exists():
                continue
            partial.rename(path)
        return path.resolve()
    raise BackupError(f"{directory} already has 99 backups named {stem}")


# PostgreSQL -------------------------------------------------------------------------------------------


def _restore_postgresql(connection: BaseDatabaseWrapper, path: Path) -> None:
    # The restored objects belong to the role the site connects as, whichever role made the backup; the
    # backup's grants are left out, so a grant to a role this server lacks cannot stop the restore.
    _run(
        connection,
        "pg_restore",
        "--no-owner",
        "--no-privileges",
        "--exit-on-error",
        "--single-transaction",
        str(path),
    )


def _run(connection: BaseDatabaseWrapper, program: str, *args: str) -> None:
    program_path = client(program, server_major(connection))
    connection.close()  # the client's own connection is the only one this process keeps open
    argv, env = client_invocation(program_path, connection.settings_dict, *args)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = masked((done.stderr or done.stdout).strip(), connection)
        raise BackupError(f"{program} failed on {describe(connection)} (exit {done.returncode}):\n{output}")


def client_invocation(
    program: Path, db: dict[str, Any], *args: str, environ: dict[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment for a PostgreSQL client on the database `db` (Django's
    settings of a connection): where to connect goes in `--dbname`, the password in PGPASSWORD."""
    options = db.get("OPTIONS") or {}
    keywords = {info.keyword.decode() for info in pq.Conninfo.get_defaults()} - SECRET_PARAMETERS
    parameters = {
        "dbname": db["NAME"],
        "host": db.get("HOST") or None,
        "port": str(db["PORT"]) if db.get("PORT") else None,
        "user": db.get("USER") or None,
        **{key: str(value) for key, value in options.items() if key in keywords},
    }
    target = conninfo.make_conninfo(**{key: value for key, value in parameters.items() if value})
    env = dict(os.environ if environ is None else environ)
    if db.get("PASSWORD"):
        env["PGPASSWORD"] = str(db["PASSWORD"])
    role = [f"--role={options['assume_role']}"] if options.get("assume_role") else []
    return [str(program), "--no-password", f"--dbname={target}", *role, *args], env


def server_major(connection: BaseDatabaseWrapper) -> int:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version_num")
            (number,) = cursor.fetchone()
    except DatabaseError as error:
        raise BackupError(f"cannot reach {describe(connection)}: {masked(str(error), connection)}") from error
    return int(number) // 10000


def client(program: str, major: int) -> Path:
    """The `program` (pg_dump, pg_restore) of PostgreSQL `major`: Debian's versioned directory first,
    then one on PATH if it is that version. An older client refuses a newer server, and a newer one
    writes dumps an older server's clients cannot read, so no other version is taken."""
    versioned = Path(f"/usr/lib/postgresql/{major}/bin/{program}")
    if os.access(versioned, os.X_OK):
        return versioned
    on_path = shutil.which(program)
    found = ""
    if on_path:
        version = subprocess.run([on_path, "--version"], capture_output=True, text=True, check=False).stdout
        number = re.search(r"(\d+)(?:\.\d+)*", version)
        if number and int(number.group(1)) == major:
            return Path(on_path)
        found = f"; {on_path} is {version.strip() or 'of an unknown version'}"
    raise BackupError(
        f"no {program} for PostgreSQL {major} (the server's version): looked for {versioned} and "
        f"{program} on PATH{found}. Install the client of that version (Debian: postgresql-client-{major})"
    )


# SQLite -----------------------------------------------------------------------------------------------


@contextmanager
def _sqlite(path: Path | str, *, read_only: bool = False) -> Iterator[sqlite3.Connection]:
    target = f"{Path(path).resolve().as_uri()}?mode=ro" if read_only else str(path)
    try:
        with closing(sqlite3.connect(target, uri=read_only, timeout=20)) as connection:
            yield connection
    except sqlite3.Error as error:
        raise BackupError(f"SQLite: {error} ({path})") from error


def _copy_sqlite(connection: BaseDatabaseWrapper, partial: Path) -> None:
    with _sqlite(connection.settings_dict["NAME"], read_only=True) as reading, _sqlite(partial) as copy:
        reading.backup(copy)
        # The site runs the file in WAL mode; the copy is one self-contained file.
        copy.execute("PRAGMA journal_mode=DELETE")


def _restore_sqlite(connection: BaseDatabaseWrapper, path: Path) -> None:
    connection.close()
    target = connection.settings_dict["NAME"]
    with _sqlite(path, read_only=True) as source, _sqlite(target) as restored:
        # Asked again on the connection that writes, in case a table appeared since.
        (objects,) = restored.execute(
            "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view')"
        ).fetchone()
        if objects:
            raise BackupError(f"{describe(connection)} is not empty: nothing was changed")
        source.backup(restored)


# After a restore --------------------------------------------------------------------------------------


def _migration_state(connection: BaseDatabaseWrapper) -> tuple[int, int]:
    """How many of this code's migrations the restored database lacks, and how many it has applied
    that this code does not know (a backup made by newer code). Known means on disk: the migrations a
    squashed one replaces are left out of the graph but are still this code's."""
    executor = MigrationExecutor(connection)
    graph = executor.loader.graph
    unapplied = len(executor.migration_plan(graph.leaf_nodes()))
    unknown = len(set(executor.loader.applied_migrations or {}) - set(executor.loader.disk_migrations))
    return unapplied, unknown
