"""`manage.py restore FILE` (`make restore FILE=…`): a backup made by `manage.py backup` restored into the
empty database DATABASE_URL names (ops/backups.py). A database with tables, or of the other kind, is
refused with nothing changed (exit status 1)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from ops.backups import BackupError, describe, restore


class Command(BaseCommand):
    help = "Restore a backup file into the empty database DATABASE_URL names (refused if it has tables)."
    # The site's checks open the database (an SQLite file would be made by them): a refused restore
    # leaves the target as it found it. They run when the restored site starts.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", type=Path, help="a file `manage.py backup` wrote")
        parser.add_argument(
            "--database", default="default", help="the connection to restore into (default: default)"
        )

    def handle(self, *, file: Path, database: str, **options) -> None:
        try:
            restored = restore(path=file, using=database)
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Restored {file} into {describe(connections[database])}: {restored.tables} tables."
        )
        if restored.unknown:
            self.stdout.write(
                f"The backup has {_migrations(restored.unknown)} this code does not know: it was made by "
                "a newer revision. Run that revision's code on it."
            )
        elif restored.unapplied:
            self.stdout.write(
                f"This code has {_migrations(restored.unapplied)} the backup lacks: "
                "`manage.py migrate` applies them."
            )
        else:
            self.stdout.write("`manage.py migrate` has nothing to apply: the site can start on it as it is.")


def _migrations(count: int) -> str:
    return f"{count} migration{'' if count == 1 else 's'}"
