"""A real server for the runner: migrate and seed a temporary SQLite file, serve it on 127.0.0.1.

One process (`manage.py runserver --noreload`) for a whole run, so every case sees the same code and the
same catalogue; `/health` tells which revision and tool catalogue that code is. Starting, waiting for
`/health` and stopping are the harness's (`harness.server`), as for the bench's servers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.revision import PROJECT_DIR
from harness.server import ServerError, ServerProcess

SETTINGS_MODULE = "evals.server_settings"


class SeededServer:
    """`with SeededServer() as server: server.base_url` — a migrated, seeded site on a free port."""

    def __init__(self, python: str | None = None, quiet: bool = True) -> None:
        self.python = python or sys.executable
        self.quiet = quiet
        self.base_url = ""
        self.server: ServerProcess | None = None
        self.directory: Path | None = None

    def env(self) -> dict[str, str]:
        """The environment of the server's processes: its settings and its database (once started).
        Anything else that must reach the same database (the runner's seat steps) runs with it."""
        if self.directory is None:
            raise ServerError("the server has not been started")
        return self._env()

    def _env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
        env["DEBUG"] = "1"  # a development server: static files from the source folders, no secret needed
        env["DJANGO_SETTINGS_MODULE"] = SETTINGS_MODULE
        env["EVALS_SQLITE_PATH"] = str(self.directory / "evals.sqlite3")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_DIR), env.get("PYTHONPATH")]))
        env.setdefault("PYTHONUNBUFFERED", "1")
        return env

    def _manage(self, *args: str) -> None:
        result = subprocess.run(
            [self.python, "manage.py", *args],
            cwd=PROJECT_DIR,
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            raise ServerError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")

    def start(self, timeout: float = 60.0) -> str:
        self.directory = Path(tempfile.mkdtemp(prefix="agentready-evals-"))
        # The system checks are the suite's and `make run`'s to make; each would cost a second here.
        self._manage("migrate", "--no-input", "--skip-checks", "-v", "0")
        self._manage("seed_demo", "--skip-checks", "-v", "0")
        self.server = ServerProcess(
            "evals",
            lambda port: [
                self.python,
                "manage.py",
                "runserver",
                "--noreload",
                "--skip-checks",
                f"127.0.0.1:{port}",
            ],
            env=self._env(),
            log_path=self.directory / "server.log",
        )
        self.base_url = self.server.base_url
        return self.server.start(timeout=timeout)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=10)
            self.server = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self) -> SeededServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
