"""pretix as the peer of `make bench-peer`: its virtualenv, configuration, databases, Redis and gunicorn.

pretix 2026.8.0 is what an organiser would otherwise install. It gets everything of its own: a
virtualenv (in the user's cache, shared by every clone: `PEER_HOME`, Python 3.12 found as the Makefile
finds ours, its pinned requirements in bench/peer-requirements.txt, never the project's uv.lock), a
configuration file in the bench's work
directory, a PostgreSQL database on the bench's server and a Redis database number. Its migrated
database (`bench_agentready_pretix_<version>`) and its built static files are made once and kept for
later runs; every run seeds a copy of that database through pretix's ORM (bench/pretix_side.py), runs
`VACUUM ANALYZE` on it (autovacuum is off on this machine's PostgreSQL, and pretix's quota query plans
badly without statistics) and keeps it as the template every write run starts from (`createdb -T`).

It runs under gunicorn with exactly the flags of our servers (`bench.infra.gunicorn`: 2 sync workers)
and no celery, so its tasks (placing an order, rendering its e-mails) run eagerly in the request.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from uv import find_uv_bin

from bench.infra import (
    ADMIN_URL,
    DB_PREFIX,
    ROOT,
    BenchError,
    Databases,
    _admin_connect,
    _admin_execute,
    gunicorn,
    last_json_line,
    log,
)
from harness.server import ServerProcess

VERSION = "2026.8.0"
REQUIREMENTS = ROOT / "bench" / "peer-requirements.txt"
#: Of the requirement lines (not the comments): what the virtualenv is made from.
DIGEST = hashlib.sha256(
    "\n".join(
        line for line in REQUIREMENTS.read_text().splitlines() if line.strip() and not line.startswith("#")
    ).encode()
).hexdigest()
#: pretix's virtualenv and static files, outside the clone and named by its requirements' digest: a new
#: clone (CI's, a second checkout) uses the one already made on this machine rather than installing it
#: and building its static files again, and a change of the requirements makes a new one.
PEER = Path(
    os.environ.get("PEER_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "agentready-events"
    / f"pretix-{VERSION}-{DIGEST[:12]}"
)
VENV = PEER / "venv"
PYTHON = VENV / "bin" / "python"
SIDE = ROOT / "bench" / "pretix_side.py"
#: Migrated once, kept between runs (its comment says it is complete).
MIGRATED = f"{DB_PREFIX}_pretix_{VERSION.replace('.', '_')}"
REDIS_MARK = "agentready-bench-peer"
SETTINGS_MODULE = "bench_pretix_settings"


@dataclass(frozen=True)
class Names:
    """Where one pretix keeps its data: the seeded template, the live copy, its Redis database number
    (cache and sessions, flushed before every run it serves)."""

    seed: str
    live: str
    redis_db: int


BENCH = Names(
    seed=f"{DB_PREFIX}_pretix_seed",
    live=f"{DB_PREFIX}_pretix",
    redis_db=int(os.environ.get("BENCH_PEER_REDIS_DB", "9")),
)


class PeerUnavailable(BenchError):
    """pretix could not be installed here (no Python 3.12, no package registry): the reason says which."""


# ---- the virtualenv ------------------------------------------------------------------------------


def find_python() -> str | None:
    """A Python 3.12, searched as the Makefile searches ours (`FIND_PYTHON`): PEER_PYTHON (the Makefile
    passes its own search's answer), then `python3.12` on PATH, then pyenv's 3.12 builds."""
    candidates = [os.environ.get("PEER_PYTHON", ""), shutil.which("python3.12") or ""]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += [str(path / "bin" / "python3") for path in sorted(pyenv.glob("3.12*"), reverse=True)]
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; sys.exit(sys.version_info[:2] != (3, 12))"],
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return candidate
    return None


def install(*, timeout: float = 900) -> Path:
    """`PEER/venv` with pretix's pinned requirements, and its static files built; done once (a stamp
    holds the requirements' digest), by one process at a time (a lock file: a bench and a test run
    may both ask). PeerUnavailable if it cannot be made here."""
    PEER.mkdir(parents=True, exist_ok=True)
    with open(PEER / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install(timeout)


def _install(timeout: float) -> Path:
    stamp = VENV / ".installed"
    if stamp.exists() and stamp.read_text() == DIGEST:
        return PYTHON
    base = find_python()
    if base is None:
        raise PeerUnavailable("no Python 3.12 found (PATH, pyenv): pretix 2026.8.0 is installed with one")
    log(f"installing pretix {VERSION} into {VENV} with {base} (once on this machine)")
    shutil.rmtree(VENV, ignore_errors=True)
    # uv, as for our own environment (the project's virtualenv has it, through nox[uv]): from a cold
    # cache pip took over three minutes here, uv a few seconds.
    uv = find_uv_bin()
    steps = [
        [uv, "venv", "--quiet", "--python", base, str(VENV)],
        [uv, "pip", "install", "--quiet", "--python", str(PYTHON), "-r", str(REQUIREMENTS)],
    ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as error:
            raise PeerUnavailable(f"uv {' '.join(step[1:3])} took more than {timeout:.0f} s") from error
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if not line.startswith("WARNING")]
            raise PeerUnavailable(f"uv {' '.join(step[1:3])} failed: {' '.join(errors[-3:])[:400]}")
    _pretix(["rebuild"], config=_write_config(PEER / "rebuild", database=None), timeout=600, what="rebuild")
    stamp.write_text(DIGEST)
    return PYTHON


# ---- configuration -------------------------------------------------------------------------------


def _write_config(directory: Path, *, database: str | None, redis_db: int = 0) -> Path:
    """pretix's configuration file and the settings module that names a dummy e-mail backend (pretix
    hard-codes SMTP): mails are rendered, as in production, and not sent."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{SETTINGS_MODULE}.py").write_text(
        "from pretix.settings import *  # noqa: F403\n"
        'EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"\n'
    )
    admin = urlsplit(ADMIN_URL)
    lines = [
        "[pretix]",
        "instance_name=bench",
        "url=http://127.0.0.1:8000",  # each server's own port: PRETIX_PRETIX_URL
        f"datadir={directory / 'data'}",
        "ecb_rates=off",
        "currency=EUR",
        "[django]",
        f"secret={secrets.token_urlsafe(40)}",
        "debug=off",
        "[locale]",
        "timezone=Asia/Taipei",
    ]
    if database is not None:
        lines += [
            "[database]",
            "backend=postgresql",
            f"name={database}",
            f"user={admin.username or ''}",
            f"password={admin.password or ''}",
            f"host={admin.hostname or ''}",
            f"port={admin.port or ''}",
            "[redis]",
            f"location=redis://127.0.0.1:6379/{redis_db}",
            "sessions=true",
        ]
    path = directory / "pretix.cfg"
    path.write_text("\n".join(lines) + "\n")
    return path


def _env(config: Path, **extra: str) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    return {
        **{key: os.environ[key] for key in keep if key in os.environ},
        "PRETIX_CONFIG_FILE": str(config),
        "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE,
        "PYTHONPATH": str(config.parent),
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def _pretix(args: list[str], *, config: Path, timeout: float, what: str) -> str:
    """`python -P -m pretix ARGS` (or bench/pretix_side.py) in pretix's virtualenv."""
    command = [str(PYTHON), "-P", *(["-m", "pretix", *args] if args[0] != str(SIDE) else args)]
    try:
        done = subprocess.run(
            command, cwd=config.parent, env=_env(config), capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as error:
        raise BenchError(f"pretix {what}: no answer within {timeout:.0f} s") from error
    if done.returncode != 0:
        raise BenchError(
            f"pretix {what} failed ({done.returncode}):\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        )
    return done.stdout


def side(config: Path, *args: str, timeout: float = 300) -> dict:
    """bench/pretix_side.py ARGS against the database `config` names: the JSON it prints last."""
    what = f"pretix_side {args[0]}"
    return last_json_line(_pretix([str(SIDE), *args], config=config, timeout=timeout, what=what), what)


# ---- databases and Redis -------------------------------------------------------------------------


def _migrated() -> bool:
    with _admin_connect() as connection:
        row = connection.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [MIGRATED]
        ).fetchone()
    return row is not None and row[0] == f"pretix {VERSION} migrated"


def prepare(dbs: Databases, workdir: Path, *, capacity: int, names: Names = BENCH) -> dict:
    """The seeded template (`names.seed`, VACUUM ANALYZE'd) and the live copy (`names.live`): pretix's
    database for this run. Its migrated database is made once and kept; the seed is this run's."""
    if dbs.vendor != "postgresql":
        raise PeerUnavailable("pretix runs on PostgreSQL here; the bench fell back to SQLite")
    if not _migrated():
        log(f"migrating pretix into {MIGRATED} (once; kept for later runs)")
        _admin_execute(f"DROP DATABASE IF EXISTS {MIGRATED} WITH (FORCE)")
        _admin_execute(f"CREATE DATABASE {MIGRATED}")
        _pretix(
            ["migrate"],
            config=_write_config(workdir / "pretix", database=MIGRATED),
            timeout=900,
            what="migrate",
        )
        _admin_execute(f"COMMENT ON DATABASE {MIGRATED} IS 'pretix {VERSION} migrated'")
    flush_redis(names.redis_db)  # before the seed, which fills pretix's cache
    dbs.create(names.seed, template=MIGRATED)
    config = _write_config(workdir / "pretix", database=names.seed, redis_db=names.redis_db)
    seeded = side(config, "seed", "--capacity", str(capacity))
    vacuum(names.seed)
    reset(dbs, names)
    live = _write_config(workdir / "pretix", database=names.live, redis_db=names.redis_db)
    return {**seeded, "config": str(live)}


def vacuum(name: str) -> None:
    """`VACUUM ANALYZE` of database `name`: statistics and a visibility map, as autovacuum would keep."""
    import psycopg

    parts = urlsplit(ADMIN_URL)
    with psycopg.connect(parts._replace(path=f"/{name}").geturl(), autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")


def reset(dbs: Databases, names: Names = BENCH) -> None:
    """pretix's database back to the seeded template, and its Redis database emptied (no cached
    availability or session of a previous run). Its server must be stopped."""
    dbs.create(names.live, template=names.seed)
    flush_redis(names.redis_db)


def flush_redis(number: int) -> None:
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, db=number)
    keys = client.dbsize()
    if keys and not client.exists(REDIS_MARK):
        raise BenchError(
            f"Redis database {number} holds {keys} keys the bench did not write; choose another with "
            "BENCH_PEER_REDIS_DB"
        )
    client.flushdb()
    client.set(REDIS_MARK, "1")


# ---- the server ----------------------------------------------------------------------------------


class PretixServer(ServerProcess):
    """`gunicorn pretix.wsgi` with our servers' flags, ready when its `/healthcheck/` answers."""

    def __init__(self, config: Path, workdir: Path) -> None:
        def command(port: int) -> list[str]:
            ours = gunicorn(port)
            return [str(PYTHON), "-P", "-m", "gunicorn", "pretix.wsgi", *ours[ours.index("--workers") :]]

        super().__init__("pretix", command, env={}, log_path=workdir / "gunicorn-pretix.log")
        self.env = _env(config, PRETIX_PRETIX_URL=self.base_url)
        self.config = config

    def start(self, *, timeout: float = 90) -> str:
        with self.log_path.open("wb") as output:
            self.process = subprocess.Popen(
                self.command(self.port),
                cwd=self.config.parent,
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.process = None
                raise BenchError(f"pretix's gunicorn exited:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.base_url + "/healthcheck/", timeout=2) as answer:
                    if answer.status == 200:
                        log(f"server pretix ready on {self.base_url}")
                        return self.base_url
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.3)
        self.stop()
        raise BenchError(f"pretix did not answer /healthcheck/ within {timeout:.0f} s:\n{self.log_tail()}")

    def errors_logged(self) -> list[str]:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        markers = ("Traceback", "Internal Server Error", "WORKER TIMEOUT", "Worker exiting")
        return [line for line in text.splitlines() if any(marker in line for marker in markers)]


def main(argv: list[str]) -> int:
    """`python -m bench.peer install`: the virtualenv alone (the test and `make bench-peer` use it)."""
    if argv != ["install"]:
        print("usage: python -m bench.peer install", file=sys.stderr)
        return 2
    try:
        print(install())
    except PeerUnavailable as error:
        print(f"pretix unavailable: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
