"""`manage.py import_eval_report FILE [FILE …]`: store eval reports made elsewhere for the dashboard."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from readiness.reports import NotAReport, import_report


class Command(BaseCommand):
    help = "Import eval report JSON files (evals/reports/*.json) into the database; a report counts once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("files", nargs="+", type=Path)

    def handle(self, *, files: list[Path], **options) -> None:
        for path in files:
            try:
                run, created = import_report(path.read_bytes(), source=path.name)
            except (OSError, NotAReport) as error:
                raise CommandError(f"{path}: {error}") from error
            state = "imported" if created else "already imported"
            self.stdout.write(f"{path.name}: {state} ({run.mode}/{run.via}, revision {run.revision[:12]})")
