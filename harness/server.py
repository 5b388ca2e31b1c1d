"""A site in a child process on 127.0.0.1: started on a free port, ready when `/health` answers, stopped.

The eval runner serves a seeded SQLite site with `manage.py runserver`, the bench and the soak serve
theirs with gunicorn; both are this one process wrapper with another command. (The browser tests use
Django's LiveServerThread instead, inside pytest, on the test database: tests/browser/conftest.py.)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from harness import HarnessError
from harness.revision import PROJECT_DIR, fetch_health


class ServerError(HarnessError):
    """The server could not be prepared, or did not answer."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServerProcess:
    """`command(port)` run in the project directory, in its own process group (so stopping it stops its
    workers too), its output in `log_path`; ready when `/health` answers ok."""

    def __init__(
        self, name: str, command: Callable[[int], list[str]], *, env: dict[str, str], log_path: Path
    ) -> None:
        self.name = name
        self.command = command
        self.env = env
        self.log_path = log_path
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self, *, timeout: float = 60.0) -> str:
        """Start the server and wait for its `/health`; its base URL. On failure it is stopped again."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(self.port),
                cwd=PROJECT_DIR,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise ServerError(f"server {self.name} exited ({code}):\n{self.log_tail()}")
            if fetch_health(self.base_url, timeout=2).get("ok"):
                return self.base_url
            time.sleep(0.2)
        self.stop()
        raise ServerError(
            f"server {self.name} did not answer /health within {timeout:.0f} s:\n{self.log_tail()}"
        )

    def stop(self, *, grace: float = 15.0) -> None:
        """SIGTERM to the process group, SIGKILL after `grace` seconds; nothing if it is not running."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        except ProcessLookupError:
            pass

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"
