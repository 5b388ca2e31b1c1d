"""`--record`: a finished run is stored in the database the CALLER's environment names (its DATABASE_URL),
through `manage.py import_eval_report` in a subprocess — never in the runner's temporary site's database.

No browser and no server: the run itself is replaced by one that writes a small report (and, as the
runner's own server does for its processes, points DATABASE_URL elsewhere meanwhile); the recording is
real, into a throw-away SQLite file migrated here.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

import evals.__main__ as cli
from evals import report as reports
from harness.revision import PROJECT_DIR

pytestmark = [pytest.mark.integration, pytest.mark.slow]

RELEASE = {"revision": "rec0rd5ha1", "toolCatalogueFingerprint": "sha256:catalogue"}


def small_report(mode: str) -> dict:
    cases = [
        {"name": "SEL-01 en: free events", "category": "SEL", "outcome": "pass", "reasons": []},
        {
            "name": "NO-01 en: small talk",
            "category": "NO",
            "outcome": "fail",
            "reasons": ["a tool was called"],
        },
    ]
    return {
        "kind": "agentready-evals-report",
        "formatVersion": 1,
        "mode": mode,
        "via": "webmcp",
        "startedAt": "2026-12-01T10:00:00Z",
        "finishedAt": "2026-12-01T10:01:00Z",
        "health": {"start": RELEASE, "end": RELEASE},
        "cases": cases,
        "totals": reports.totals(cases),
    }


@pytest.fixture
def project_database(tmp_path, monkeypatch) -> Path:
    """A throw-away SQLite file, migrated, named by this shell's DATABASE_URL."""
    path = tmp_path / "project.sqlite3"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "config.settings")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=PROJECT_DIR,
        env=dict(os.environ),
        check=True,
        timeout=300,
    )
    return path


def stored(path: Path) -> tuple[list[tuple], list[tuple]]:
    with closing(sqlite3.connect(path)) as db:
        runs = db.execute("SELECT mode, via, revision, revision_changed FROM readiness_evalrun").fetchall()
        results = db.execute('SELECT "case", outcome FROM readiness_evalresult ORDER BY "case"').fetchall()
    return runs, results


def fake_run(tmp_path: Path, monkeypatch):
    """A run that writes a small report, and meanwhile sets DATABASE_URL to another database, as the
    runner's temporary site does for its own processes."""

    def run(options):
        monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'the-runners-site.sqlite3'}")
        report = small_report(options.mode)
        return report, reports.write(report, options.reports_dir)

    monkeypatch.setattr(cli, "run", run)


def test_record_stores_the_run_in_the_callers_database(project_database, tmp_path, monkeypatch, capsys):
    fake_run(tmp_path, monkeypatch)
    code = cli.main(["smoke", "--record", "--reports", str(tmp_path / "reports")])
    output = capsys.readouterr().out
    assert code == 1, output  # one case failed: the run's own exit code
    assert "recorded: " in output and ": imported (smoke/webmcp, revision rec0rd5ha1)" in output
    runs, results = stored(project_database)
    assert runs == [("smoke", "webmcp", "rec0rd5ha1", 0)]
    assert results == [("NO-01 en: small talk", "fail"), ("SEL-01 en: free events", "pass")]
    assert not (tmp_path / "the-runners-site.sqlite3").exists()

    # The same report again counts once.
    [json_path] = (tmp_path / "reports").glob("*.json")
    assert "already imported" in reports.record(
        json_path, dict(os.environ, DATABASE_URL=f"sqlite:///{project_database}")
    )
    assert len(stored(project_database)[0]) == 1


def test_record_failure_is_exit_code_4(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "not-migrated.sqlite3"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{empty}")
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "config.settings")

    def run(options):
        report = small_report(options.mode)
        report["cases"] = report["cases"][:1]  # every case passed
        report["totals"] = reports.totals(report["cases"])
        return report, reports.write(report, options.reports_dir)

    monkeypatch.setattr(cli, "run", run)
    code = cli.main(["smoke", "--record", "--reports", str(tmp_path / "reports")])
    assert code == 4
    assert "--record: manage.py import_eval_report failed" in capsys.readouterr().err
