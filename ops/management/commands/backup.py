"""`manage.py backup` (`make backup`): one backup file of the database DATABASE_URL names (ops/backups.py).

The file goes to `--directory`, else BACKUP_DIR, else backups/ in the project; its path is the last
line of the output, so a script can take it (`make -s backup | tail -n 1`).
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from ops.backups import BackupError, backup, describe


class Command(BaseCommand):
    help = (
        "Back up the database DATABASE_URL names (pg_dump -Fc, or SQLite's online backup); "
        "the file's path is the last line."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--directory",
            type=Path,
            default=Path(os.environ.get("BACKUP_DIR") or settings.BASE_DIR / "backups"),
            help="where the backup file goes (default: BACKUP_DIR, else backups/)",
        )
        parser.add_argument(
            "--database", default="default", help="the connection to back up (default: default)"
        )

    def handle(self, *, directory: Path, database: str, **options) -> None:
        try:
            made = backup(directory=directory, using=database)
        except BackupError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Backed up {describe(connections[database])}: {made.tables} tables, {made.size} bytes."
        )
        self.stdout.write(str(made.path))
