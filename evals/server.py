"""A real server for the runner: migrate and seed a temporary SQLite file, serve it on 127.0.0.1.

One process (`manage.py runserver --noreload`) for a whole run, so every case sees the same code and the
same catalogue; `/health` tells which revision and tool catalogue that code is.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
SETTINGS_MODULE = "evals.server_settings"


class ServerError(RuntimeError):
    """The eval server could not be prepared or did not answer."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch_health(base_url: str, timeout: float = 10.0) -> dict:
    """`/health` as JSON (a 503 body too); on no answer, a stand-in saying so."""
    request = urllib.request.Request(f"{base_url.rstrip('/')}/health", headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        try:
            return json.loads(error.read().decode("utf-8"))
        except ValueError:
            return {"ok": False, "status": f"http-{error.code}"}
    except (OSError, ValueError) as error:
        return {"ok": False, "status": "unreachable", "error": str(error)}


def health_stamp(health: dict) -> dict:
    """The part of /health that ties a result to a release."""
    return {
        "revision": health.get("revision"),
        "toolCatalogueFingerprint": health.get("toolCatalogueFingerprint"),
        "version": health.get("version"),
        "status": health.get("status"),
    }


def working_tree_dirty() -> bool | None:
    """Whether the checkout differs from its commit (then the revision alone does not name the code)."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(out.stdout.strip())


class SeededServer:
    """`with SeededServer() as server: server.base_url` — a migrated, seeded site on a free port."""

    def __init__(self, python: str | None = None, quiet: bool = True) -> None:
        self.python = python or sys.executable
        self.quiet = quiet
        self.base_url = ""
        self.process: subprocess.Popen | None = None
        self.directory: Path | None = None
        self.log_path: Path | None = None

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
        self.log_path = self.directory / "server.log"
        self._manage("migrate", "--no-input", "-v", "0")
        self._manage("seed_demo", "-v", "0")
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [self.python, "manage.py", "runserver", "--noreload", "--skip-checks", f"127.0.0.1:{port}"],
                cwd=PROJECT_DIR,
                env=self._env(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"the eval server exited early:\n{self.log()}")
            if fetch_health(self.base_url, timeout=2).get("ok"):
                return self.base_url
            time.sleep(0.2)
        self.stop()
        raise ServerError(f"the eval server did not answer /health within {timeout:.0f}s")

    def log(self) -> str:
        if self.log_path and self.log_path.exists():
            return self.log_path.read_text(errors="replace")[-4000:]
        return ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self) -> SeededServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
