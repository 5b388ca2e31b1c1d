"""What the bench stands on: its own databases, its own gunicorn servers, all on 127.0.0.1.

Everything here is created by the bench and removed by it: databases named `bench_agentready*`
(PostgreSQL, or SQLite files in the bench's temporary directory when PostgreSQL is not reachable) and
gunicorn processes started in their own process group, stopped by their id (the harness's server
process, `harness.server`, as for the eval runner's server).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from harness.server import ServerProcess

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
ADMIN_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
DB_PREFIX = "bench_agentready"
WORKERS = 2

# Variables of the project's settings that would change what is measured if the caller's shell set them.
HERMETIC_UNSET = (
    "REDIS_URL",
    "SECURE_SSL_REDIRECT",
    "SECURE_COOKIES",
    "SECURE_HSTS_SECONDS",
    "BEHIND_TLS_PROXY",
    "CSRF_TRUSTED_ORIGINS",
    "APP_REVISION",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
)


class BenchError(RuntimeError):
    """A step could not run or its self-check failed; the message says which and why."""


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(args: list[str], *, env: dict[str, str], timeout: float, what: str) -> str:
    """Run a child to completion within `timeout` seconds; its stdout, or BenchError with its output."""
    try:
        done = subprocess.run(
            args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as error:
        raise BenchError(f"{what}: no answer within {timeout:.0f} s") from error
    if done.returncode != 0:
        raise BenchError(f"{what} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return done.stdout


def last_json_line(output: str, what: str) -> dict:
    for line in reversed(output.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise BenchError(f"{what} printed no JSON result:\n{output[-2000:]}")


# ---- databases ---------------------------------------------------------------------------------


@dataclass
class Databases:
    """The bench's databases: one template migrated once, then cloned (fast) for each data set."""

    vendor: str  # "postgresql" or "sqlite"
    workdir: Path
    version: str = ""
    created: list[str] = field(default_factory=list)

    @classmethod
    def choose(cls, workdir: Path, *, force_sqlite: bool = False) -> Databases:
        if not force_sqlite:
            try:
                version = _admin_query("SHOW server_version")
            except Exception as error:
                reason = (str(error).strip().splitlines() or [""])[0][:100]
                banner(
                    f"PostgreSQL is not reachable at {_redact(ADMIN_URL)}",
                    f"({type(error).__name__}: {reason}).",
                    "FALLING BACK TO SQLITE: throughput, scale and contention figures are NOT",
                    "representative of production; contention may show 'database is locked' errors.",
                )
            else:
                return cls(vendor="postgresql", workdir=workdir, version=f"PostgreSQL {version}")
        else:
            banner("SQLite requested (--sqlite): figures are NOT representative of production.")
        import sqlite3

        return cls(vendor="sqlite", workdir=workdir, version=f"SQLite {sqlite3.sqlite_version} (fallback)")

    def url(self, name: str) -> str:
        if self.vendor == "sqlite":
            return f"sqlite:///{self.workdir / f'{name}.sqlite3'}"
        parts = urlsplit(ADMIN_URL)
        return urlunsplit(parts._replace(path=f"/{name}"))

    def create(self, name: str, *, template: str | None = None) -> str:
        """Create database `name` (empty, or a copy of `template`); drop a leftover of a crashed run first."""
        assert name.startswith(DB_PREFIX), name
        self.drop(name)
        if self.vendor == "sqlite":
            path = self.workdir / f"{name}.sqlite3"
            if template:
                shutil.copyfile(self.workdir / f"{template}.sqlite3", path)
            else:
                path.touch()
        else:
            clause = f" TEMPLATE {template}" if template else ""
            _admin_execute(f"CREATE DATABASE {name}{clause}")
        self.created.append(name)
        return self.url(name)

    def drop(self, name: str) -> None:
        assert name.startswith(DB_PREFIX), name
        if self.vendor == "sqlite":
            (self.workdir / f"{name}.sqlite3").unlink(missing_ok=True)
        else:
            _admin_execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def drop_all(self) -> None:
        for name in reversed(self.created):
            try:
                self.drop(name)
            except Exception as error:
                log(f"could not drop {name}: {error}")
        self.created.clear()


def _redact(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=f"{user}{host}{port}"))


def _admin_connect():
    import psycopg

    return psycopg.connect(ADMIN_URL, connect_timeout=3, autocommit=True)


def _admin_query(sql: str) -> str:
    with _admin_connect() as connection:
        return str(connection.execute(sql).fetchone()[0])


def _admin_execute(sql: str) -> None:
    with _admin_connect() as connection:
        connection.execute(sql)


def banner(*lines: str) -> None:
    width = max(len(line) for line in lines) + 4
    print("!" * width, file=sys.stderr)
    for line in lines:
        print(f"! {line.ljust(width - 4)} !", file=sys.stderr)
    print("!" * width, file=sys.stderr, flush=True)


# ---- servers -----------------------------------------------------------------------------------


def http_get(url: str, *, timeout: float = 10) -> tuple[int, bytes]:
    assert url.startswith("http://127.0.0.1:"), url
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def gunicorn(port: int, *, workers: int = WORKERS) -> list[str]:
    return [
        PYTHON,
        "-m",
        "gunicorn",
        "config.wsgi:application",
        "--workers",
        str(workers),
        "--bind",
        f"127.0.0.1:{port}",
        "--timeout",
        "120",
        "--graceful-timeout",
        "5",
        "--backlog",
        "2048",
    ]


class Server(ServerProcess):
    """`gunicorn config.wsgi` with WORKERS sync workers on a free port of 127.0.0.1."""

    def __init__(self, name: str, *, env: dict[str, str], workdir: Path) -> None:
        super().__init__(name, gunicorn, env=env, log_path=workdir / f"gunicorn-{name}.log")

    def start(self, *, timeout: float = 60) -> str:
        base_url = super().start(timeout=timeout)
        log(f"server {self.name} ready on {base_url} ({WORKERS} workers)")
        return base_url

    def errors_logged(self) -> list[str]:
        """Tracebacks and worker crashes in the server's log (LOG_LEVEL=ERROR keeps only those)."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        markers = ("Traceback", "Internal Server Error", "WORKER TIMEOUT", "Worker exiting")
        return [line for line in text.splitlines() if any(marker in line for marker in markers)]
