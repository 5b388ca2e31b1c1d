"""The one skeleton of `python -m bench.run` and `python -m bench.soak`.

A session holds what a run stands on and must give back: a lock (one `make bench`, one `make soak` at a
time on a machine), an overall time limit (SIGALRM; SIGTERM and SIGHUP stop it the same way), a
temporary work directory, the databases (PostgreSQL, or SQLite with a loud note) and the gunicorn
servers. `main()` runs a measurement in a session and, whatever happens, stops the servers, drops the
databases and removes the work directory (kept, with the servers' logs, after a failure); then it
reports: the context line, the result file `bench/results/<prefix><UTC timestamp>.json` and, for a
full bench, the table between the markers of bench/README.md and docs/performance.md.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import platform
import secrets
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from bench.infra import (
    HERMETIC_UNSET,
    PYTHON,
    ROOT,
    WORKERS,
    BenchError,
    Databases,
    Server,
    banner,
    last_json_line,
    log,
    run,
)
from harness import HarnessError
from harness.revision import checkout_revision

RESULTS = ROOT / "bench" / "results"
# Where the latest table goes: between the markers of each (bench/README.md, docs/performance.md).
READMES = (ROOT / "bench" / "README.md", ROOT / "docs" / "performance.md")
TABLE_START, TABLE_END = "<!-- bench:table:start -->", "<!-- bench:table:end -->"
THROTTLE = "100000/min"  # writes per client: high enough that the load is never throttled
CONN_MAX_AGE = 60


class Stop(Exception):
    """The overall time limit passed, or the run was asked to stop: clean up and leave."""


def base_env(workdir: Path) -> dict[str, str]:
    """The servers' and tasks' environment: the project's settings, production-like, nothing shared."""
    env = {key: value for key, value in os.environ.items() if key not in HERMETIC_UNSET}
    env.update(
        DJANGO_SETTINGS_MODULE="bench.settings",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        DB_CONN_MAX_AGE=str(CONN_MAX_AGE),
        WRITE_THROTTLE_RATE=THROTTLE,
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        LOG_LEVEL="ERROR",
        BENCH_STATIC_ROOT=str(workdir / "static"),
        BENCH_BARE_BODY=str(workdir / "bare.json"),
        PYTHONUNBUFFERED="1",
    )
    return env


class Session:
    """One run's work directory, databases and servers (see the module's docstring)."""

    def __init__(self, name: str, *, force_sqlite: bool) -> None:
        self.name = name
        self.started = datetime.now(UTC)
        self.finished: datetime | None = None
        self.workdir = Path(tempfile.mkdtemp(prefix=f"agentready-{name}-"))
        self.dbs = Databases.choose(self.workdir, force_sqlite=force_sqlite)
        self.env = base_env(self.workdir)
        self.servers: list[Server] = []
        self.revision = "unknown"

    # ---- databases and servers -----------------------------------------------------------------

    def env_for(self, url: str, **extra: str) -> dict[str, str]:
        return {**self.env, "DATABASE_URL": url, **extra}

    def manage(self, url: str, command: str) -> None:
        """`manage.py COMMAND --no-input` against database `url` (migrate, collectstatic)."""
        run(
            [PYTHON, "manage.py", command, "--no-input", "-v", "0"],
            env=self.env_for(url),
            timeout=300,
            what=command,
        )

    def task(self, url: str, *args: str, timeout: float, **extra_env: str) -> dict:
        """`python -m bench.tasks ARGS` against database `url`: the JSON it prints last."""
        what = f"bench.tasks {' '.join(args)}"
        output = run(
            [PYTHON, "-m", "bench.tasks", *args],
            env=self.env_for(url, **extra_env),
            timeout=timeout,
            what=what,
        )
        return last_json_line(output, what)

    def populate(self, url: str, label: str, *args: str) -> dict:
        """Fill database `url` (bench.tasks populate ARGS) and say how long it took."""
        started = time.monotonic()
        filled = self.task(url, "populate", *args, timeout=900)
        log(f"filled {label}: {filled['events']} events in {time.monotonic() - started:.0f} s")
        return filled

    def server(self, name: str, url: str) -> Server:
        """A gunicorn server on database `url` (not started); stopped when the session ends."""
        server = Server(name, env=self.env_for(url), workdir=self.workdir)
        self.servers.append(server)
        return server

    def close(self, succeeded: bool) -> None:
        for server in self.servers:
            server.stop()
        self.dbs.drop_all()
        if succeeded:
            shutil.rmtree(self.workdir, ignore_errors=True)
        else:
            print(f"server logs kept in {self.workdir}", file=sys.stderr)

    # ---- reporting -----------------------------------------------------------------------------

    def context(self, details: str) -> str:
        """The line above every table: when, on what, which code."""
        return (
            f"{self.finished:%Y-%m-%d %H:%M} UTC · {self.dbs.version} · {os.cpu_count()} CPUs · gunicorn "
            f"{WORKERS} sync workers · revision {self.revision} · {details}"
        )

    def sqlite_note(self, text: str) -> None:
        if self.dbs.vendor != "postgresql":
            banner(text)

    def write_result(self, about: dict[str, Any], results: dict[str, Any], *, prefix: str = "") -> Path:
        """`bench/results/<prefix><started>.json` for this session (see `write_record`)."""
        return write_record(
            prefix=prefix,
            started=self.started,
            finished=self.finished,
            revision=self.revision,
            about={**about, "database": {"vendor": self.dbs.vendor, "version": self.dbs.version}},
            results=results,
        )


def write_record(
    *,
    prefix: str,
    started: datetime,
    finished: datetime | None,
    revision: str,
    about: dict[str, Any],
    results: dict[str, Any],
    server: dict[str, Any] | None = None,
) -> Path:
    """`bench/results/<prefix><started>.json`: `about` (what was asked), then the machine, the server
    (the bench's settings, with `server` overriding) and the revision, then `results`."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{prefix}{started:%Y%m%dT%H%M%SZ}.json"
    record = {
        "started": started.isoformat(),
        "finished": finished.isoformat() if finished else None,
        **about,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "server": {
            "gunicorn_workers": WORKERS,
            "worker_class": "sync",
            "debug": False,
            "conn_max_age": CONN_MAX_AGE,
            "write_throttle_rate": THROTTLE,
            **(server or {}),
        },
        "revision": revision,
        **results,
    }
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {path.relative_to(ROOT)}")
    return path


def update_readme(text: str) -> None:
    """Replace the text between the table markers and nothing else (others may be editing the rest)."""
    for readme in READMES:
        if not readme.exists():
            continue
        content = readme.read_text()
        if TABLE_START not in content or TABLE_END not in content:
            continue
        before, rest = content.split(TABLE_START, 1)
        _, after = rest.split(TABLE_END, 1)
        readme.write_text(f"{before}{TABLE_START}\n{text}\n{TABLE_END}{after}")


# ---- main ----------------------------------------------------------------------------------------


def argument_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The command line of a bench or soak run, with the options every session takes."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    parser.add_argument(
        "--sqlite", action="store_true", help="use the SQLite fallback even if PostgreSQL answers"
    )
    return parser


def _lock(name: str) -> IO[str] | None:
    """The machine-wide lock of `make <name>`, held until the process exits; None if another holds it."""
    lock = open(Path(tempfile.gettempdir()) / f"agentready-{name}.lock", "w")  # noqa: SIM115  (held until exit)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    return lock


def main[T](
    name: str,
    measure: Callable[[Session], T],
    report: Callable[[Session, T], int],
    *,
    force_sqlite: bool,
    time_limit_s: int,
) -> int:
    """Run `measure` in a session named `name` ("bench" or "soak") within `time_limit_s`, clean up, then
    `report` (after the session ended: servers stopped, databases dropped). Exit status: `report`'s;
    1 when the measurement failed or was stopped; 2 when another run of the same kind holds the lock."""
    lock = _lock(name)
    if lock is None:
        print(
            f"Another `make {name}` is running on this machine; try again when it has finished.",
            file=sys.stderr,
        )
        return 2

    def stop(signum: int, frame: object) -> None:
        reason = (
            "ran past its time limit" if signum == signal.SIGALRM else f"got {signal.Signals(signum).name}"
        )
        raise Stop(f"the {name} {reason}")

    for signum in (signal.SIGALRM, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C, also when started in the background
    signal.alarm(time_limit_s)
    session = Session(name, force_sqlite=force_sqlite)
    succeeded = False
    try:
        measured = measure(session)
        succeeded = True
    except (BenchError, HarnessError, Stop, KeyboardInterrupt) as error:
        print(f"\n{name} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        session.close(succeeded)
    session.finished = datetime.now(UTC)
    session.revision = checkout_revision()
    return report(session, measured)
