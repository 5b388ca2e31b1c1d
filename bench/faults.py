"""`make faults`: PostgreSQL goes away, gunicorn workers are killed, under mixed traffic, and nothing
that was acknowledged is lost.

    .venv/bin/python -m bench.faults                       # the figures of docs/reliability.md
    .venv/bin/python -m bench.faults --no-record           # the same, no result file (what the test runs)
    .venv/bin/python -m bench.faults --faults outage       # one fault only
    .venv/bin/python -m bench.faults --faults worker-kill  # the killed workers only
    .venv/bin/python -m bench.faults --faults payment-sweep  # the killed payment sweep only

A fault-injection run, not a benchmark. It makes a throw-away PostgreSQL cluster of its own (`initdb`
and `pg_ctl` of the newest /usr/lib/postgresql/*/bin, or FAULTS_PG_BIN; as the `postgres` OS user
when run as root) in a temporary directory, on a free port of 127.0.0.1 with its socket in that
directory and trust authentication. It never touches another PostgreSQL. The database is migrated and
filled by `bench.tasks populate` (events, and signed-in users with sessions made in setup), then the
bench's gunicorn (bench/infra.py: 2 sync workers, DEBUG=0, DB_CONN_MAX_AGE=60) serves it.

Client threads send a closed-loop mix: saves (`PUT /api/me/saved/<id>`) and registrations
(`POST /api/events/<id>/registration`) by signed-in users (session cookie, CSRF cookie and header), and
API searches. Every write is a (user, event) pair never sent before, on an event without a seat limit,
so each acknowledged write must leave exactly one row. Each request has a timeout (10 s); a client
that gets no answer sends the same request again (up to `--retries` times: every request of the mix is
idempotent), as a real client would. During the traffic these faults follow, in order (`--faults`):

- `outage`: `pg_ctl stop -m fast`, the database stays down `--outage` seconds, `pg_ctl start`;
- `restart`: `pg_ctl restart -m fast` while the traffic goes on;
- `idle-restart`: the clients pause until no request is in flight, `pg_ctl restart -m fast`, the
  clients go on. The workers' persistent connections died while idle: the first request on each
  shows what a dead pooled connection does after the database is back;
- `worker-kill`: `--kills` times (4), SIGKILL to a gunicorn worker (never the arbiter) that is warm
  (it has held a connection to the database for 2 s: booted, its first request done, working off
  requests), the oldest first, at least `--kill-every` seconds (0.5) after the previous one's
  replacement appeared and only while another worker is warm too, so one always answers; then traffic
  until every replacement serves. A request on the killed worker loses its connection (dropped) and is
  sent again; the other worker answers it;
- `payment-sweep` (bench/sweep_fault.py): overdue paid registrations on events with waiting lists,
  made before the traffic; `manage.py expire_payments` SIGKILLed while blocked inside its batch's
  transaction, then run again until nothing is overdue. Checked on the database afterwards: the
  killed run left nothing, every overdue registration expired once with its Activity row (channel
  `system`) and told once, each freed seat offered once.

Afterwards, with gunicorn stopped (its graceful stop writes each surviving worker's pending Activity
rows) and the database up, it checks and exits non-zero on any violation:

- every save and registration answered 2xx is in the database (saved row, a registration holding its
  seat: confirmed, or, on a paid event, waiting for its payment);
- every acknowledged registration has its first e-mail in the outbox (the queued `open_notification`
  task that names it, one: the confirmation, or a paid one's payment instructions), no person has two
  confirmed registrations for one
  event, and every write the run sent that is in the database has its `Activity` row (`OK`, the
  person's, the event's);
- no answer was a 5xx other than the 503 envelope (`TEMPORARY_FAILURE` / `EVENT_SERVICE_UNAVAILABLE`),
  and no other status came back but 2xx, 429 `RATE_LIMITED` and 409 (`EVENT_FULL`, …);
- no request went unanswered or took longer than the timeout, except those dropped by a killed worker
  (a connection error while a kill happened), and each of those was answered when sent again; a
  dropped registration ends with exactly one confirmed registration, with its Activity row; at least
  one registration was cut off by a kill and sent again (the figure "registrations dropped, sent
  again"), else the run proves nothing about a registration interrupted mid-write;
- a 503 only while the database was down or within `--recovery-limit` seconds (5) after it came
  back, and the first 2xx within that limit too, without restarting gunicorn;
- gunicorn's workers are the ones it started with (same PIDs, none booted since, no worker timeout),
  and the server logged no "Internal Server Error"; after `worker-kill`, the arbiter is the same
  process, each killed worker was replaced, and no other worker was booted, killed or timed out;
- and that the run meant something: 2xx before the first fault and after each, 503s during each fault
  of the database that had traffic, and the kills dropped requests in flight.

It prints a table per fault of the database, one of the kills, and writes
`bench/results/faults-<UTC timestamp>.json` (not with `--no-record`). The cluster, the server and the
temporary directories are removed whatever happens (kept, with the logs, after a failed run).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pwd
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench import memory
from bench.infra import DB_PREFIX, PYTHON, WORKERS, BenchError, Server, last_json_line, log, run
from bench.load import CSRF
from bench.session import CONN_MAX_AGE, base_env, write_record
from bench.sweep_fault import NAME as SWEEP_FAULT
from bench.sweep_fault import PaymentSweep
from bench.tables import markdown
from harness import HarnessError
from harness.revision import checkout_revision
from harness.server import free_port

DB_NAME = f"{DB_PREFIX}_faults"


@dataclass(frozen=True)
class WorkerFault:
    """A fault of the site's own background work (the task worker's sweeps, or the command that runs
    one at once), beside those of the database and of gunicorn: `prepare` fills the database before
    the traffic, `run` during the traffic (e.g. SIGKILL a sweep in the middle of its batch, then run it
    again), `check` afterwards, on the database, its figures and its violations, `table` prints them."""

    prepare: Callable[[dict[str, str], argparse.Namespace], None]
    run: Callable[[Traffic, Cluster, dict[str, str], argparse.Namespace], None]
    check: Callable[[Cluster], tuple[dict, list[str]]]
    table: Callable[[dict], str]


def _worker_faults() -> dict[str, WorkerFault]:
    sweep = PaymentSweep(db_name=DB_NAME)
    return {SWEEP_FAULT: WorkerFault(sweep.prepare, sweep.run, sweep.check, sweep.table)}


#: The faults of the worker's sweeps, by the name `--faults` takes: `payment-sweep`
#: (bench/sweep_fault.py), the payment sweep killed in the middle of its batch and run again, then
#: every overdue registration expired exactly once and each freed seat offered once, each expiry with
#: its Activity row (channel `system`: the sweeps perform their rows as the declared system actor,
#: events.actions.system_caller).
WORKER_FAULTS: dict[str, WorkerFault] = _worker_faults()
FAULTS = ("outage", "restart", "idle-restart", "worker-kill", *WORKER_FAULTS)
TEMPORARY = {"ok": False, "code": "TEMPORARY_FAILURE", "reason": "EVENT_SERVICE_UNAVAILABLE"}
# Refusals a write may get in this mix without anything being wrong (documented in the API's schema).
EXPECTED_4XX = {429: {"RATE_LIMITED"}, 409: {"EVENT_FULL", "ALREADY_REGISTERED", "REGISTRATION_CLOSED"}}
# Markers of trouble in gunicorn's log (Django's request logger writes the 500s it answers); the
# arbiter's "Worker (pid:…) was sent SIGKILL!" and "Booting worker" are expected for the kills only.
LOG_MARKERS = ("Internal Server Error", "WORKER TIMEOUT", "Worker exiting", "Booting worker", "was sent")
# What a client sees when the worker holding its connection dies (reset, closed without an answer, or
# closed in the middle of the answer); a timeout is not one.
DROPPED = {
    "ConnectionResetError",
    "RemoteDisconnected",
    "BrokenPipeError",
    "ConnectionAbortedError",
    "IncompleteRead",
}
# The action whose OK Activity row a committed write of each kind must have.
ACTION_OF = {"save": "save_event", "register": "register_event"}
# How long a killed worker's replacement may take to appear and to serve (boot, first request).
REPLACEMENT_LIMIT = 60.0
# How long a worker must have been serving before it counts as warm: a new worker imports the URLconf
# and the views in its first request (seconds on a busy machine), after it has opened its connection.
WARM_AFTER = 2.0
RETRY_PAUSE = 0.05  # a client's pause before it sends a dropped request again (s)


class Stop(Exception):
    """The time limit passed, or the run was asked to stop: clean up and leave."""


# ---- the throw-away cluster --------------------------------------------------------------------


def postgres_bin() -> Path | None:
    """The directory of initdb/pg_ctl: FAULTS_PG_BIN, else the newest /usr/lib/postgresql/*/bin."""
    if os.environ.get("FAULTS_PG_BIN"):
        path = Path(os.environ["FAULTS_PG_BIN"])
        return path if (path / "pg_ctl").exists() else None
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: [int(part) if part.isdigit() else 0 for part in p.parent.parent.name.split(".")],
    )
    return found[-1].parent if found else None


def unavailable() -> str:
    """Why this machine cannot run the faults (empty when it can)."""
    if postgres_bin() is None:
        return "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/pg_ctl; set FAULTS_PG_BIN)"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root and `runuser` is not available (initdb and postgres refuse root)"
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` OS user to run initdb and postgres as"
    return ""


class Cluster:
    """A PostgreSQL cluster in a temporary directory of its own: data, socket and log all inside it."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="agentready-faults-pg-"))
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:  # initdb and postgres refuse to run as root
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.data = self.root / "data"
        self.log_path = self.root / "postgres.log"
        self.port = free_port()
        self.initialized = False
        self.version = ""

    def _run(self, *args: str, timeout: float = 90) -> str:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        try:
            done = subprocess.run(
                command, cwd=self.root, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise BenchError(f"{' '.join(args[:2])}: no answer within {timeout:.0f} s") from error
        if done.returncode != 0:
            output = f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}\n{self.log_tail()}"
            raise BenchError(f"{' '.join(args[:2])} failed ({done.returncode}):\n{output}")
        return done.stdout

    def init(self) -> None:
        self._run(
            *("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust"),
            *("-E", "UTF8", "--no-locale", "--no-sync"),
        )
        self.initialized = True
        settings = (
            f"port = {self.port}\n"
            "listen_addresses = '127.0.0.1'\n"
            f"unix_socket_directories = '{self.root}'\n"
            "max_connections = 50\n"
            "shared_buffers = 32MB\n"
        )
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(settings)
        # "postgres (PostgreSQL) 15.20 (Debian …)" → "PostgreSQL 15.20 (Debian …)"
        self.version = "PostgreSQL " + self._run("postgres", "--version").strip().split(")", 1)[-1].strip()

    def pg_ctl(self, action: str, *extra: str) -> None:
        self._run("pg_ctl", action, "-D", str(self.data), "-l", str(self.log_path), "-w", "-t", "60", *extra)

    def start(self) -> None:
        self.pg_ctl("start")

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("stop", "-m", mode)

    def restart(self) -> None:
        self.pg_ctl("restart", "-m", "fast")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def connect(self, name: str = "postgres"):
        import psycopg

        return psycopg.connect(self.url(name), connect_timeout=5, autocommit=True)

    def destroy(self, *, keep: bool) -> None:
        if self.initialized and self.running():
            try:
                self.stop("immediate")
            except BenchError as error:
                log(f"could not stop the throw-away cluster: {error}")
                self._kill_postmaster()
        if keep:
            print(f"PostgreSQL log kept in {self.log_path}", file=sys.stderr)
        else:
            shutil.rmtree(self.root, ignore_errors=True)

    def _kill_postmaster(self) -> None:
        """The postmaster this run started (its pid file), if pg_ctl could not stop it."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            os.kill(pid, signal.SIGQUIT)
        except (OSError, ValueError, IndexError):
            pass

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


# ---- traffic -----------------------------------------------------------------------------------


@dataclass
class Answer:
    """One request: what was sent, when (seconds from the start of the traffic), and what came back."""

    kind: str  # save, register, search
    path: str
    user: int | None  # index into the sessions
    event: str | None
    sent: float
    done: float = 0.0
    status: int = 0  # 0: no answer (an error or the timeout)
    code: str = ""
    reason: str = ""
    ok: bool | None = None
    error: str = ""
    failure: str = ""  # the exception's class name when there was no answer
    request: int = 0  # the logical request: a request sent again keeps its number
    attempt: int = 0  # 0, then 1, 2, … for each time it was sent again

    @property
    def seconds(self) -> float:
        return self.done - self.sent


@dataclass
class Fault:
    name: str
    down_at: float = 0.0  # the command that takes the database away was started
    stopped_at: float = 0.0  # `pg_ctl stop` returned (outage only)
    up_at: float = 0.0  # `pg_ctl start`/`restart -w` returned: the database accepts connections
    resumed_at: float = 0.0  # idle-restart: the clients were let go again


@dataclass
class Traffic:
    """The clients' shared state: the write pairs handed out, the answers, the pause gate."""

    sessions: list[str]
    session_cookie: str
    csrf_cookie: str
    pool: list[str]  # event ids without a seat limit
    timeout: float
    pause: float
    seed: int
    port: int
    retries: int
    started: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    answers: list[Answer] = field(default_factory=list)
    next_pair: dict[str, int] = field(default_factory=lambda: {"save": 0, "register": 0})
    requests: int = 0
    in_flight: int = 0
    go: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)

    def now(self) -> float:
        return time.monotonic() - self.started

    def pair(self, kind: str) -> tuple[int, str]:
        """A (user, event) pair this kind of write has not sent before (wraps after users × pool)."""
        with self.lock:
            index = self.next_pair[kind]
            self.next_pair[kind] += 1
        users = len(self.sessions)
        return index % users, self.pool[(index // users) % len(self.pool)]

    def client(self, number: int) -> None:
        chooser = random.Random(self.seed * 1000 + number)
        while not self.stop.is_set():
            if not self.go.wait(timeout=0.2):
                continue
            roll = chooser.random()
            event: str | None
            if roll < 0.4:
                user, event = self.pair("save")
                kind, path, method = "save", f"/api/me/saved/{event}", "PUT"
            elif roll < 0.8:
                user, event = self.pair("register")
                kind, path, method = "register", f"/api/events/{event}/registration", "POST"
            else:
                user, event = chooser.randrange(len(self.sessions)), None
                kind, path, method = "search", "/api/events?location=taipei&price=free", "GET"
            with self.lock:
                self.in_flight += 1  # until its last retry: a paused run waits for the whole request
                self.requests += 1
                number = self.requests
            try:
                for attempt in range(self.retries + 1):
                    answer = Answer(kind, path, user, event, 0.0, request=number, attempt=attempt)
                    try:
                        self.send(answer, method)
                    finally:
                        with self.lock:
                            self.answers.append(answer)
                    if answer.status:
                        break
                    time.sleep(RETRY_PAUSE)  # no answer: the same request again (each is idempotent)
            finally:
                with self.lock:
                    self.in_flight -= 1
            if self.pause:
                time.sleep(self.pause)

    def send(self, answer: Answer, method: str) -> None:
        headers = {
            "Accept": "application/json",
            "Cookie": f"{self.session_cookie}={self.sessions[answer.user or 0]}; {self.csrf_cookie}={CSRF}",
        }
        if method != "GET":
            headers |= {"X-CSRFToken": CSRF, "Content-Type": "application/json"}
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        answer.sent = self.now()
        try:
            connection.request(method, answer.path, body=b"" if method != "GET" else None, headers=headers)
            response = connection.getresponse()
            body = response.read()
            answer.status = response.status
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                answer.ok = parsed.get("ok") if isinstance(parsed.get("ok"), bool) else None
                answer.code = str(parsed.get("code") or "")
                answer.reason = str(parsed.get("reason") or "")
            else:
                answer.error = f"not a JSON object: {body[:120]!r}"
        except (OSError, http.client.HTTPException) as failure:
            answer.status, answer.failure = 0, type(failure).__name__
            answer.error = f"{answer.failure}: {failure}"
        finally:
            answer.done = self.now()
            connection.close()

    def wait_idle(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.in_flight == 0:
                    return
            time.sleep(0.01)
        raise BenchError(f"requests still in flight {timeout:.0f} s after the clients were paused")


# ---- killing workers ---------------------------------------------------------------------------


@dataclass
class Kill:
    """One SIGKILL of a gunicorn worker (times in seconds from the start of the traffic)."""

    pid: int
    at: float  # just before the signal
    sent: float = 0.0  # os.kill returned: the worker is gone
    replaced_by: int = 0
    replaced_at: float = 0.0  # the arbiter had forked the replacement
    serving_at: float | None = None  # the replacement held a connection to the database


@dataclass
class KillPhase:
    """The `worker-kill` fault: its kills, and the traffic from its start until its end."""

    arbiter: int
    workers_before: list[int]
    started: float
    ended: float = 0.0
    kills: list[Kill] = field(default_factory=list)


def database_sockets(port: int) -> set[str]:
    """The socket inodes of the established TCP connections to 127.0.0.1:`port` (/proc/net/tcp)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # sl local rem st …: rem is HEX_IP:HEX_PORT, st 01 is ESTABLISHED, the 10th field the inode
            if len(fields) > 9 and fields[3] == "01" and int(fields[2].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def holds_connection(pid: int, inodes: set[str]) -> bool:
    """Whether process `pid` has one of these sockets open."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            return True
    return False


def started_at(pid: int) -> int:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat, field 22): its age."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


class Killer:
    """Kills the arbiter's serving workers one after the other and follows their replacements.

    A worker counts as serving once it holds a connection to the database: it has booted and is working
    off requests (the sync workers keep their connection, `CONN_MAX_AGE`), and as warm `WARM_AFTER`
    seconds later (its first request, which imports the URLconf and the views, is done). Killing only a
    warm worker puts each kill in the middle of the traffic rather than in a worker's boot. It kills one
    only while another is warm too, so the site keeps a worker answering: killing the last one would
    leave none for as long as a replacement boots (6–15 s on a busy 2-CPU machine), and the requests
    queued meanwhile would outlast the clients' timeout without anything being wrong with the server.
    """

    def __init__(self, traffic: Traffic, arbiter: int, database_port: int) -> None:
        self.traffic = traffic
        self.arbiter = arbiter
        self.database_port = database_port
        self.seen_serving: dict[int, float] = {}  # pid → when it was first seen serving (traffic time)

    def serving(self) -> list[int]:
        """The arbiter's workers that hold a connection to the database, oldest first."""
        inodes = database_sockets(self.database_port)
        workers = [pid for pid in memory.children(self.arbiter) if holds_connection(pid, inodes)]
        now = self.traffic.now()
        for pid in workers:
            self.seen_serving.setdefault(pid, now)
        return sorted(workers, key=started_at)

    def warm(self) -> list[int]:
        """The serving workers seen serving `WARM_AFTER` seconds ago already, oldest first."""
        now = self.traffic.now()
        return [pid for pid in self.serving() if now - self.seen_serving[pid] >= WARM_AFTER]

    def _until(self, what: str, found, phase: KillPhase):
        deadline = time.monotonic() + REPLACEMENT_LIMIT
        while time.monotonic() < deadline:
            self._note_serving(phase)
            value = found()
            if value:
                return value
            time.sleep(0.02)
        raise BenchError(f"worker-kill: no {what} within {REPLACEMENT_LIMIT:.0f} s")

    def _target(self, killed: set[int]) -> int:
        """The oldest warm worker, if another one is warm as well (0 otherwise)."""
        warm = [pid for pid in self.warm() if pid not in killed]
        return warm[0] if len(warm) > 1 else 0

    def _note_serving(self, phase: KillPhase) -> None:
        waiting = [kill for kill in phase.kills if kill.replaced_by and kill.serving_at is None]
        if waiting:
            now, serving = self.traffic.now(), set(self.serving())
            for kill in waiting:
                if kill.replaced_by in serving:
                    kill.serving_at = now

    def registration_dropped(self, phase: KillPhase) -> bool:
        """Whether a kill has cut off a registration in flight (its connection lost, so the client
        sends it again): what the phase must show at least once."""
        with self.traffic.lock:
            answers = list(self.traffic.answers)
        return any(
            answer.kind == "register"
            and answer.status == 0
            and answer.failure in DROPPED
            and any(answer.sent <= kill.sent and answer.done >= kill.at for kill in phase.kills)
            for answer in answers
        )

    def run(self, kills: int, every: float, max_kills: int | None = None) -> KillPhase:
        """`kills` kills, then more (up to `max_kills`) until one has cut off a registration in flight:
        a worker holds one request at a time, the mix's writes are half registrations, so each kill
        drops one with some chance, never with certainty."""
        self.serving()  # the workers serving already have served the traffic before: warm
        self.seen_serving = dict.fromkeys(self.seen_serving, -WARM_AFTER)
        phase = KillPhase(
            arbiter=self.arbiter, workers_before=memory.children(self.arbiter), started=self.traffic.now()
        )
        killed: set[int] = set()
        most = max(kills, max_kills or kills)
        while len(phase.kills) < kills or (len(phase.kills) < most and not self.registration_dropped(phase)):
            pid = self._until("two warm workers, one to kill", lambda: self._target(killed), phase)
            others = set(memory.children(self.arbiter)) - {pid}
            kill = Kill(pid=pid, at=self.traffic.now())
            os.kill(pid, signal.SIGKILL)
            kill.sent = self.traffic.now()
            killed.add(pid)
            phase.kills.append(kill)

            def replacement(pid: int = pid, others: set[int] = others) -> int:
                workers = set(memory.children(self.arbiter))
                new = workers - others
                return next(iter(new)) if pid not in workers and len(new) == 1 else 0

            kill.replaced_by = self._until(f"replacement of the killed worker {pid}", replacement, phase)
            kill.replaced_at = self.traffic.now()
            log(f"  t={kill.sent:5.1f} s  worker {pid} killed, replaced by {kill.replaced_by}")
            pause = time.monotonic() + every
            self._until("end of the pause", lambda pause=pause: time.monotonic() >= pause, phase)
        self._until(
            "serving replacement of every killed worker",
            lambda: all(k.serving_at is not None or k.replaced_by in killed for k in phase.kills),
            phase,
        )
        return phase


def longest_request(args: argparse.Namespace) -> float:
    """How long one request may take with all its retries, and a margin."""
    return (args.retries + 1) * (args.timeout + RETRY_PAUSE) + 5


def drive(
    traffic: Traffic, cluster: Cluster, args: argparse.Namespace, arbiter: int, env: dict[str, str]
) -> tuple[list[Fault], KillPhase | None]:
    """The timeline: warm traffic, then each fault followed by traffic; the clients stop at the end."""
    clients = [
        threading.Thread(target=traffic.client, args=(n,), daemon=True, name=f"faults-{n}")
        for n in range(args.clients)
    ]
    faults = []
    phase = None
    traffic.started = time.monotonic()
    traffic.go.set()
    for thread in clients:
        thread.start()
    try:
        time.sleep(args.before)
        for name in args.faults:
            if name in WORKER_FAULTS:  # the worker's sweeps: checked on the database afterwards
                WORKER_FAULTS[name].run(traffic, cluster, env, args)
                time.sleep(args.after)
                continue
            if name == "worker-kill":  # not a fault of the database: the kills have a record of their own
                killer = Killer(traffic, arbiter, cluster.port)
                phase = killer.run(args.kills, args.kill_every, args.max_kills)
                time.sleep(args.after)
                phase.ended = traffic.now()
                continue
            fault = Fault(name)
            if name == "outage":
                fault.down_at = traffic.now()
                cluster.stop("fast")
                fault.stopped_at = traffic.now()
                log(f"  t={fault.stopped_at:5.1f} s  database stopped")
                time.sleep(args.outage)
                cluster.start()
                fault.up_at = fault.resumed_at = traffic.now()
            elif name == "restart":
                fault.down_at = traffic.now()
                cluster.restart()
                fault.up_at = fault.resumed_at = traffic.now()
            else:  # idle-restart: the workers hold idle persistent connections when the database goes
                traffic.go.clear()
                traffic.wait_idle(longest_request(args))
                time.sleep(0.5)
                fault.down_at = traffic.now()
                cluster.restart()
                fault.up_at = traffic.now()
                time.sleep(0.5)
                fault.resumed_at = traffic.now()
                traffic.go.set()
            log(f"  t={fault.up_at:5.1f} s  {name}: database back after {fault.up_at - fault.down_at:.1f} s")
            faults.append(fault)
            time.sleep(args.after)
    finally:
        traffic.go.set()
        traffic.stop.set()
        deadline = time.monotonic() + longest_request(args)
        for thread in clients:
            thread.join(timeout=max(0.1, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in clients):
        raise BenchError(f"a client thread did not finish within {longest_request(args):.0f} s of the end")
    if phase is not None and not phase.ended:
        phase.ended = traffic.now()
    return faults, phase


# ---- verdict -----------------------------------------------------------------------------------


Pair = tuple[int, str]  # (user id, event public id)


@dataclass
class Stored:
    """What the database holds after the run, keyed as the traffic sent it."""

    users: list[int]  # user ids by session index
    saved: set[Pair]
    registered: Counter[Pair]  # registrations holding a seat per person and event
    registration_ids: dict[Pair, list[int]]  # those registrations' ids
    outbox: Counter[int]  # their first e-mails queued, by registration id
    activity: set[tuple[str, int, str]]  # (action, user id, event) of the writes' OK Activity rows


def stored(cluster: Cluster) -> Stored:
    """Read what the checks compare the answers with, in plain SQL (the run has no Django of its own)."""
    with cluster.connect(DB_NAME) as connection:
        users = [
            row[0]
            for row in connection.execute(
                "SELECT id FROM auth_user WHERE username LIKE 'bench-user-%' ORDER BY id"
            ).fetchall()
        ]
        saved = connection.execute(
            "SELECT s.user_id, e.public_id FROM events_savedevent s "
            "JOIN events_event e ON e.id = s.event_id WHERE s.user_id IS NOT NULL"
        ).fetchall()
        registered = connection.execute(
            "SELECT r.id, r.user_id, e.public_id FROM events_registration r "
            "JOIN events_event e ON e.id = r.event_id WHERE r.status IN ('confirmed', 'pending_payment')"
        ).fetchall()
        # The outbox is the task backend's table (events/mail/outbox.py): `notify` queues one
        # open_notification task per e-mail, its fields naming the registration.
        outbox = connection.execute(
            "SELECT (args_kwargs -> 'args' -> 1 ->> 'registration_id')::bigint, count(*) "
            "FROM django_tasks_database_dbtaskresult "
            "WHERE task_path IN "
            "('events.mail.outbox.open_notification', 'events.mail.tasks.open_notification') "
            "AND args_kwargs -> 'args' -> 1 ->> 'kind' IN ('registration_confirmed', 'payment_due') "
            "GROUP BY 1"
        ).fetchall()
        activity = connection.execute(
            "SELECT a.action, a.user_id, e.public_id FROM events_activity a "
            "JOIN events_event e ON e.id = a.event_id WHERE a.outcome = 'OK' AND a.action = ANY(%s)",
            (list(ACTION_OF.values()),),
        ).fetchall()
    registration_ids: dict[Pair, list[int]] = {}
    for pk, user, event in registered:
        registration_ids.setdefault((user, event), []).append(pk)
    return Stored(
        users=users,
        saved={(user, event) for user, event in saved},
        registered=Counter({pair: len(ids) for pair, ids in registration_ids.items()}),
        registration_ids=registration_ids,
        outbox=Counter({pk: count for pk, count in outbox if pk is not None}),
        activity={(action, user, event) for action, user, event in activity},
    )


def is_temporary(answer: Answer) -> bool:
    return answer.status == 503 and (answer.ok, answer.code, answer.reason) == (
        TEMPORARY["ok"],
        TEMPORARY["code"],
        TEMPORARY["reason"],
    )


def answered_2xx(answer: Answer) -> bool:
    return 200 <= answer.status < 300


class Verdict:
    """The answers of one run against what the database holds (see the module's docstring)."""

    def __init__(self, answers: list[Answer], facts: Stored, phase: KillPhase | None) -> None:
        self.answers, self.facts, self.phase = answers, facts, phase
        self.rows = {"save": facts.saved, "register": set(facts.registered)}
        self.chains: dict[int, list[Answer]] = {}  # each request's attempts, in order
        for answer in sorted(answers, key=lambda a: (a.request, a.attempt)):
            self.chains.setdefault(answer.request, []).append(answer)

    def pair(self, answer: Answer) -> Pair:
        assert answer.user is not None and answer.event is not None  # a write always has both
        return self.facts.users[answer.user], answer.event

    def in_db(self, answer: Answer) -> bool:
        return self.pair(answer) in self.rows[answer.kind]

    def dropped(self, answer: Answer) -> bool:
        """No answer because a killed worker held the connection: a connection error across a kill."""
        return (
            answer.status == 0
            and answer.failure in DROPPED
            and self.phase is not None
            and any(answer.sent <= kill.sent and answer.done >= kill.at for kill in self.phase.kills)
        )

    def writes(self, answers: list[Answer]) -> dict:
        """The checks of the writes among `answers`: stored when acknowledged, each acknowledged
        registration with its confirmation e-mail queued once, each stored write with its Activity row."""
        sent = [answer for answer in answers if answer.kind in ACTION_OF]
        lost = [answer for answer in sent if answered_2xx(answer) and not self.in_db(answer)]
        committed = sorted({(answer.kind, *self.pair(answer)) for answer in sent if self.in_db(answer)})
        without_activity = [
            (kind, user, event)
            for kind, user, event in committed
            if (ACTION_OF[kind], user, event) not in self.facts.activity
        ]
        registrations = {
            self.pair(answer) for answer in sent if answer.kind == "register" and answered_2xx(answer)
        }
        queued = {
            pair: sum(self.facts.outbox[pk] for pk in self.facts.registration_ids.get(pair, []))
            for pair in registrations
        }
        return {
            "lost": lost,
            "committed": len(committed),
            "without_activity": without_activity,
            "acknowledged_registrations": len(registrations),
            "without_outbox": sorted(pair for pair, count in queued.items() if count == 0),
            "outbox_doubled": sorted(pair for pair, count in queued.items() if count > 1),
        }


def judge(
    answers: list[Answer],
    faults: list[Fault],
    phase: KillPhase | None,
    cluster: Cluster,
    args: argparse.Namespace,
    logged: list[str],
) -> dict:
    """Every figure and every violation of the run (see the module's docstring)."""
    facts = stored(cluster)
    verdict = Verdict(answers, facts, phase)
    in_db = verdict.in_db
    violations: list[str] = []

    writes = [answer for answer in answers if answer.kind in ACTION_OF]
    acknowledged = [answer for answer in writes if answered_2xx(answer)]
    checked = verdict.writes(answers)
    lost = checked["lost"]
    if len(facts.users) < len(set(answer.user for answer in writes)):
        violations.append(f"the database lists {len(facts.users)} bench users, fewer than the run used")
    sent_twice = Counter((a.kind, a.user, a.event) for a in writes if a.attempt == 0)
    if any(count > 1 for count in sent_twice.values()):
        violations.append("a write pair was sent twice: the run outgrew --users × the events without a limit")
    for answer in lost[:10]:
        violations.append(
            f"LOST: {answer.kind} by user {answer.user} of {answer.event} answered {answer.status} "
            f"at {answer.done:.2f} s is not in the database"
        )
    unacknowledged_stored = sum(1 for answer in writes if not answered_2xx(answer) and in_db(answer))
    doubled = sorted(pair for pair, count in facts.registered.items() if count > 1)
    for user, event in doubled[:10]:
        violations.append(
            f"DOUBLED: user id {user} has {facts.registered[user, event]} confirmed registrations for {event}"
        )
    for user, event in checked["without_outbox"][:10]:
        violations.append(f"NO OUTBOX E-MAIL: the acknowledged registration of user id {user} for {event}")
    for user, event in checked["outbox_doubled"][:10]:
        violations.append(f"TWO OUTBOX E-MAILS: the registration of user id {user} for {event}")
    for kind, user, event in checked["without_activity"][:10]:
        violations.append(
            f"NO ACTIVITY ROW: the stored {kind} of user id {user} for {event} (no {ACTION_OF[kind]} OK row)"
        )

    # Which window each answer belongs to: a fault (the request overlapped [down, up]), the recovery
    # after one (sent within the limit after up), or steady (the database up all along).
    def window(answer: Answer) -> tuple[str, Fault | None]:
        for fault in faults:
            if answer.sent < fault.up_at and answer.done > fault.down_at:
                return "down", fault
        for fault in faults:
            if fault.up_at <= answer.sent <= fault.resumed_at + args.recovery_limit:
                return "recovering", fault
        return "steady", None

    per_fault: dict[str, dict[str, list[Answer]]] = {
        fault.name: {"down": [], "recovering": []} for fault in faults
    }
    steady: list[Answer] = []
    for answer in answers:
        where, fault = window(answer)
        if fault is None:
            steady.append(answer)
        else:
            per_fault[fault.name][where].append(answer)

    for answer in answers:
        where, fault = window(answer)
        during = f"{where} {fault.name}" if fault else where
        label = f"{answer.kind} {answer.path} sent at {answer.sent:.2f} s ({during})"
        if answer.status == 0:
            if not verdict.dropped(answer):
                violations.append(f"NO ANSWER: {label}: {answer.error}")
        elif answer.seconds > args.timeout:
            violations.append(f"TOO SLOW: {label} took {answer.seconds:.1f} s (timeout {args.timeout:g} s)")
        elif answer.status == 503:
            if not is_temporary(answer):
                envelope = f"{answer.code}/{answer.reason} {answer.error}"
                violations.append(f"503 WITHOUT THE ENVELOPE: {label}: {envelope}")
            elif where == "steady":
                violations.append(f"503 WHILE THE DATABASE WAS UP: {label}")
        elif answer.status >= 500:
            violations.append(f"{answer.status}: {label}: {answer.code}/{answer.reason} {answer.error}")
        elif answer.status >= 300 and answer.reason not in EXPECTED_4XX.get(answer.status, set()):
            violations.append(f"UNEXPECTED {answer.status}: {label}: {answer.code}/{answer.reason}")

    def first_2xx_after(t: float) -> float | None:
        done = [a.done for a in answers if a.sent >= t and 200 <= a.status < 300]
        return min(done) if done else None

    figures = []
    for fault in faults:
        group = per_fault[fault.name]
        down, recovering = group["down"], group["recovering"]
        first = first_2xx_after(fault.resumed_at)
        late = [a for a in recovering if not 200 <= a.status < 300]
        last_failure = max((a.done for a in late), default=None)
        row = {
            "fault": fault.name,
            "database_away_s": round(fault.up_at - fault.down_at, 2),
            "requests_during": len(down),
            "statuses_during": _statuses(down),
            "failed_after_up": len(late),
            "statuses_after_up": _statuses(recovering),
            "first_2xx_after_up_s": round(first - fault.resumed_at, 3) if first is not None else None,
            "all_good_after_up_s": round(max(last_failure, fault.resumed_at) - fault.resumed_at, 3)
            if last_failure is not None
            else 0.0,
            "max_request_s": round(max((a.seconds for a in down + recovering), default=0.0), 2),
            "failures_after_up": [
                {
                    **asdict(a),
                    "sent": round(a.sent - fault.resumed_at, 3),
                    "done": round(a.done - fault.resumed_at, 3),
                }
                for a in late[:20]
            ],
        }
        figures.append(row)
        if first is None or first - fault.resumed_at > args.recovery_limit:
            violations.append(
                f"{fault.name}: no 2xx within {args.recovery_limit:g} s of the database being back"
            )
        if fault.name != "idle-restart" and not any(is_temporary(a) for a in down):
            violations.append(f"{fault.name}: no request saw the fault (no 503 while the database was away)")
    disrupted = min([fault.down_at for fault in faults] + ([phase.started] if phase else []), default=None)
    # Only the worker's faults (they leave the served traffic alone): every 2xx of the run counts.
    before = [a for a in answers if (disrupted is None or a.done < disrupted) and answered_2xx(a)]
    if not before:
        violations.append("no 2xx before the first fault: the run proves nothing")
    kills = judge_kills(verdict, violations) if phase is not None else None
    expected = [
        line
        for kill in (phase.kills if phase else [])
        for line in (
            f"Worker (pid:{kill.pid}) was sent SIGKILL!",
            f"Booting worker with pid: {kill.replaced_by}",
        )
    ]
    for line in logged:
        if not any(marker in line for marker in expected):
            violations.append(f"server log: {line.strip()[:200]}")
    return {
        "requests": len(answers),
        "writes": len(writes),
        "acknowledged_writes": len(acknowledged),
        "acknowledged_by_kind": {
            kind: sum(1 for a in acknowledged if a.kind == kind) for kind in ("save", "register")
        },
        "lost": len(lost),
        "unacknowledged_but_stored": unacknowledged_stored,
        "registrations_doubled": len(doubled),
        "acknowledged_registrations": checked["acknowledged_registrations"],
        "without_outbox": len(checked["without_outbox"]),
        "outbox_doubled": len(checked["outbox_doubled"]),
        "committed_writes": checked["committed"],
        "without_activity": len(checked["without_activity"]),
        "dropped": sum(1 for answer in answers if verdict.dropped(answer)),
        "retried": sum(1 for answer in answers if answer.attempt > 0),
        "kills": kills,
        "statuses": _statuses(answers),
        "steady_statuses": _statuses(steady),
        "max_request_s": round(max((a.seconds for a in answers), default=0.0), 2),
        "faults": figures,
        "violations": violations,
    }


def judge_kills(verdict: Verdict, violations: list[str]) -> dict:
    """The figures of `worker-kill`: its traffic, what the kills dropped, how the retries ended."""
    phase = verdict.phase
    assert phase is not None
    # The requests of the phase: those with an attempt in flight during it, with all their attempts.
    requests = [
        chain
        for chain in verdict.chains.values()
        if chain[0].sent <= phase.ended and chain[-1].done >= phase.started
    ]
    inside = [answer for chain in requests for answer in chain]
    registrations = [chain for chain in requests if chain[0].kind == "register"]
    drops = [answer for answer in inside if verdict.dropped(answer)]
    dropped_chains = [verdict.chains[number] for number in sorted({answer.request for answer in drops})]
    retries = [answer for answer in inside if answer.attempt > 0]
    last = phase.kills[-1].sent if phase.kills else phase.started
    # A dropped request is sent again until answered: the retry's 201 made the write, its 200 found it
    # made already (the killed worker had committed it before it died).
    ended = Counter(
        "made by the retry"
        if chain[-1].status == 201
        else "already done"
        if chain[-1].status == 200
        else f"{chain[-1].status or 'no answer'} {chain[-1].reason}".strip()
        for chain in dropped_chains
        if chain[0].kind in ACTION_OF
    )
    not_one = []
    for chain in dropped_chains:
        final = chain[-1]
        if final.status == 0:
            violations.append(
                f"DROPPED AND NEVER ANSWERED: {final.kind} {final.path} sent {len(chain)} times, "
                f"last at {final.sent:.2f} s: {final.error}"
            )
        elif final.kind == "register" and (
            not answered_2xx(final) or verdict.facts.registered[verdict.pair(final)] != 1
        ):
            not_one.append(chain)
            confirmed = verdict.facts.registered[verdict.pair(final)]
            violations.append(
                f"DROPPED REGISTRATION NOT EXACTLY ONE: {final.path} by user {final.user} ended "
                f"{final.status} {final.reason} with {confirmed} confirmed"
            )
    checked = verdict.writes(inside)
    if not drops:
        violations.append(
            "worker-kill: no kill dropped a request in flight: the run proves nothing about them"
        )
    # The registrations a kill cut off in flight and the client sent again: each must end as exactly
    # one confirmed registration with its Activity row, whether the killed worker had committed it.
    cut_off = [chain for chain in dropped_chains if chain[0].kind == "register"]
    sent_again = [chain for chain in cut_off if any(answer.attempt > 0 for answer in chain)]
    registrations_ended = Counter(
        "made by the retry"
        if chain[-1].status == 201
        else "already done"
        if chain[-1].status == 200
        else f"{chain[-1].status or 'no answer'} {chain[-1].reason}".strip()
        for chain in sent_again
    )
    without_row = [
        chain
        for chain in sent_again
        if answered_2xx(chain[-1])
        and (ACTION_OF["register"], *verdict.pair(chain[-1])) not in verdict.facts.activity
    ]
    for chain in without_row[:10]:
        violations.append(
            f"DROPPED REGISTRATION WITHOUT ITS ACTIVITY ROW: {chain[-1].path} by user {chain[-1].user}"
        )
    if not sent_again:
        violations.append(
            "worker-kill: no registration was cut off by a kill and sent again: the run proves nothing "
            "about a registration interrupted mid-write (raise --max-kills)"
        )
    if not any(answered_2xx(answer) and answer.sent > last for answer in verdict.answers):
        violations.append("worker-kill: no 2xx after the last kill")
    serving = [kill.serving_at - kill.sent for kill in phase.kills if kill.serving_at is not None]
    return {
        "kills": len(phase.kills),
        "arbiter": phase.arbiter,
        "killed": [kill.pid for kill in phase.kills],
        "replacements": [kill.replaced_by for kill in phase.kills],
        "kill_times_s": [round(kill.sent - phase.started, 2) for kill in phase.kills],
        "replacement_serving_s": [round(seconds, 2) for seconds in serving],
        "phase_s": round(phase.ended - phase.started, 1),
        "requests": len(requests),
        "statuses": _statuses(inside),
        "max_request_s": round(max((answer.seconds for answer in inside), default=0.0), 2),
        "registrations_attempted": len(registrations),
        "registrations_acknowledged": sum(1 for chain in registrations if answered_2xx(chain[-1])),
        "dropped": len(drops),
        "dropped_by_kind": dict(sorted(Counter(answer.kind for answer in drops).items())),
        "retried": len(retries),
        "dropped_writes_ended": dict(sorted(ended.items())),
        "dropped_registrations_not_one": len(not_one),
        "registrations_dropped": len(cut_off),
        "registrations_sent_again": len(sent_again),
        "registrations_sent_again_ended": dict(sorted(registrations_ended.items())),
        "registrations_sent_again_without_activity": len(without_row),
        "lost": len(checked["lost"]),
        "acknowledged_registrations": checked["acknowledged_registrations"],
        "without_outbox": len(checked["without_outbox"]),
        "committed_writes": checked["committed"],
        "without_activity": len(checked["without_activity"]),
        "timeline": [asdict(kill) for kill in phase.kills],
    }


def _statuses(answers: list[Answer]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for answer in answers:
        key = str(answer.status) if answer.status != 503 or is_temporary(answer) else "503 (no envelope)"
        if answer.status in EXPECTED_4XX or (answer.status >= 400 and answer.status != 503):
            key = f"{answer.status} {answer.reason}".strip()
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def tables(result: dict) -> str:
    fault_rows: list[tuple[str, ...]] = [
        (
            row["fault"],
            f"{row['database_away_s']:.1f} s",
            ", ".join(f"{k}×{v}" for k, v in row["statuses_during"].items()) or "–",
            ", ".join(f"{k}×{v}" for k, v in row["statuses_after_up"].items()) or "–",
            f"{row['first_2xx_after_up_s']:.2f} s" if row["first_2xx_after_up_s"] is not None else "none",
            f"{row['all_good_after_up_s']:.2f} s",
            f"{row['max_request_s']:.2f} s",
        )
        for row in result["faults"]
    ]
    faults_table = markdown(
        fault_rows or [("–",) * 7],
        (
            "fault",
            "database away",
            "answers overlapping it",
            f"answers ≤ {result['recovery_limit']:g} s after",
            "first 2xx after back",
            "last failure after back",
            "slowest",
        ),
    )
    workers = result["workers"]
    kinds = result["acknowledged_by_kind"]
    summary: list[tuple[str, ...]] = [
        ("requests", str(result["requests"]), ", ".join(f"{k}×{v}" for k, v in result["statuses"].items())),
        (
            "acknowledged writes (2xx)",
            str(result["acknowledged_writes"]),
            f"saves {kinds['save']}, registrations {kinds['register']}",
        ),
        ("acknowledged but not in the database", str(result["lost"]), "must be 0"),
        ("not acknowledged but stored", str(result["unacknowledged_but_stored"]), "allowed"),
        ("registrations doubled", str(result["registrations_doubled"]), "person and event, must be 0"),
        (
            "acknowledged registrations without their outbox e-mail",
            str(result["without_outbox"]),
            f"of {result['acknowledged_registrations']}; queued twice: {result['outbox_doubled']}",
        ),
        (
            "stored writes without their Activity row",
            str(result["without_activity"]),
            f"of {result['committed_writes']}, must be 0",
        ),
        (
            "dropped (no answer: a killed worker), sent again",
            f"{result['dropped']}, {result['retried']}",
            "a drop is allowed only across a kill",
        ),
        ("slowest request", f"{result['max_request_s']:.2f} s", f"timeout {result['timeout']:g} s"),
        (
            "gunicorn workers",
            workers["verdict"],
            f"{' '.join(map(str, workers['before']))} → {' '.join(map(str, workers['after']))}",
        ),
    ]
    text = f"{faults_table}\n\n{markdown(summary, ('check', 'figure', 'detail'))}"
    if result["kills"]:
        text += f"\n\n{kills_table(result['kills'], workers)}"
    for name, figures in result.get("worker_faults", {}).items():
        text += f"\n\n{WORKER_FAULTS[name].table(figures)}"
    return text


def kills_table(kills: dict, workers: dict) -> str:
    """The `worker-kill` table: the kills, the traffic while they happened, and its checks."""
    serving = kills["replacement_serving_s"]
    ended = kills["dropped_writes_ended"]
    rows: list[tuple[str, ...]] = [
        (
            "worker kills (SIGKILL)",
            str(kills["kills"]),
            f"at {', '.join(f'{t:.1f}' for t in kills['kill_times_s'])} s; "
            f"replacement serving {min(serving, default=0):.1f}–{max(serving, default=0):.1f} s after",
        ),
        (
            "arbiter",
            "unchanged" if workers["arbiter_alive"] else "GONE",
            f"pid {kills['arbiter']}; killed {' '.join(map(str, kills['killed']))}, "
            f"replaced by {' '.join(map(str, kills['replacements']))}",
        ),
        (
            "requests while killing",
            str(kills["requests"]),
            f"{kills['phase_s']:.1f} s; " + ", ".join(f"{k}×{v}" for k, v in kills["statuses"].items()),
        ),
        (
            "registrations attempted, acknowledged",
            f"{kills['registrations_attempted']}, {kills['registrations_acknowledged']}",
            f"slowest request {kills['max_request_s']:.2f} s",
        ),
        (
            "dropped, sent again",
            f"{kills['dropped']}, {kills['retried']}",
            ", ".join(f"{k}×{v}" for k, v in kills["dropped_by_kind"].items()),
        ),
        (
            "dropped writes, once answered",
            str(sum(ended.values())),
            ", ".join(f"{k}×{v}" for k, v in ended.items()) or "–",
        ),
        (
            "registrations dropped, sent again",
            f"{kills['registrations_dropped']}, {kills['registrations_sent_again']}",
            "at least one, else the run proves nothing; ended: "
            + (", ".join(f"{k}×{v}" for k, v in kills["registrations_sent_again_ended"].items()) or "–"),
        ),
        (
            "dropped registrations not ending with one",
            str(kills["dropped_registrations_not_one"]),
            "must be 0",
        ),
        (
            "dropped registrations without their Activity row",
            str(kills["registrations_sent_again_without_activity"]),
            "must be 0",
        ),
        ("acknowledged but missing (kills)", str(kills["lost"]), "must be 0"),
        (
            "without their outbox e-mail (kills)",
            str(kills["without_outbox"]),
            f"of {kills['acknowledged_registrations']} acknowledged registrations, must be 0",
        ),
        (
            "without their Activity row (kills)",
            str(kills["without_activity"]),
            f"of {kills['committed_writes']} stored writes, must be 0",
        ),
    ]
    return markdown(rows, ("worker-kill", "figure", "detail"))


# ---- the run -----------------------------------------------------------------------------------


def prepare(cluster: Cluster, env: dict[str, str], workdir: Path, args: argparse.Namespace) -> dict:
    cluster.init()
    cluster.start()
    log(f"throw-away {cluster.version} on 127.0.0.1:{cluster.port} in {cluster.root}")
    with cluster.connect() as connection:
        connection.execute(f"CREATE DATABASE {DB_NAME}")
    run([PYTHON, "manage.py", "migrate", "--no-input", "-v", "0"], env=env, timeout=300, what="migrate")
    sessions_file = workdir / "sessions.json"
    filled = last_json_line(
        run(
            [
                *(PYTHON, "-m", "bench.tasks", "populate", "--events", str(args.events)),
                *("--contention-file", str(sessions_file), "--users", str(args.users)),
            ],
            env=env,
            timeout=300,
            what="bench.tasks populate",
        ),
        "bench.tasks populate",
    )
    log(f"filled: {filled['events']} events, {args.users} signed-in users")
    for name in (name for name in args.faults if name in WORKER_FAULTS):
        WORKER_FAULTS[name].prepare(env, args)
    return json.loads(sessions_file.read_text())


def measure(args: argparse.Namespace, state: dict) -> dict:
    bindir = postgres_bin()
    assert bindir is not None
    cluster = state["cluster"] = Cluster(bindir)
    workdir = state["workdir"] = Path(tempfile.mkdtemp(prefix="agentready-faults-"))
    env = {
        **base_env(workdir),
        "DATABASE_URL": cluster.url(DB_NAME),
        "DB_CONN_MAX_AGE": str(args.conn_max_age),
    }
    setup = prepare(cluster, env, workdir, args)
    server = state["server"] = Server("faults", env=env, workdir=workdir)
    server.start()
    assert server.process is not None
    master = server.process.pid
    workers_before = memory.children(master)
    logged_before = len(_log_lines(server))
    # Events 0, 4, 8, … have no seat limit (bench.tasks.bench_event): registrations are never refused.
    pool = [f"evt-bench-{n}" for n in range(0, args.events, 4)]
    traffic = Traffic(
        sessions=setup["sessions"],
        session_cookie=setup["session_cookie"],
        csrf_cookie=setup["csrf_cookie"],
        pool=pool,
        timeout=args.timeout,
        pause=args.pause,
        seed=args.seed,
        port=server.port,
        retries=args.retries,
    )
    log(
        f"traffic: {args.clients} clients, {args.before:g} s, then {', '.join(args.faults)} "
        f"({args.after:g} s of traffic after each)"
    )
    faults, phase = drive(traffic, cluster, args, master, env)
    workers_after = memory.children(master)
    alive = server.process.poll() is None
    logged = _log_lines(server)[logged_before:]
    server.stop()  # its graceful stop writes the workers' Activity rows still waiting (events/activity.py)
    result = judge(traffic.answers, faults, phase, cluster, args, logged)
    workers, problem = check_workers(workers_before, workers_after, alive, phase)
    result.update(
        timeout=args.timeout,
        recovery_limit=args.recovery_limit,
        database=f"{cluster.version} (throw-away cluster)",
        timeline=[asdict(fault) for fault in faults],
        workers={**workers, "arbiter": master},
    )
    if problem:
        result["violations"].append(problem)
    for name in (name for name in args.faults if name in WORKER_FAULTS):
        figures, violations = WORKER_FAULTS[name].check(cluster)
        result.setdefault("worker_faults", {})[name] = figures
        result["violations"].extend(violations)
    return result


def check_workers(
    before: list[int], after: list[int], alive: bool, phase: KillPhase | None
) -> tuple[dict, str]:
    """The workers' figures, and what is wrong with them: the database faults replace no worker; each
    killed one is replaced, and nothing else is (same arbiter, WORKERS workers, none killed still there)."""
    figures = {"before": before, "after": after, "arbiter_alive": alive}
    if phase is None:
        unchanged = alive and before == after and len(before) == WORKERS
        problem = (
            "" if unchanged else f"gunicorn workers changed: {before} → {after} (arbiter alive: {alive})"
        )
        return {**figures, "verdict": "unchanged" if unchanged else "REPLACED"}, problem
    killed = {kill.pid for kill in phase.kills}
    replacements = {kill.replaced_by for kill in phase.kills}
    problems = []
    if not alive:
        problems.append("the arbiter is gone")
    if phase.workers_before != before:
        problems.append(f"replaced before the kills: {before} → {phase.workers_before}")
    if len(after) != WORKERS or killed & set(after) or not set(after) <= (set(before) | replacements):
        problems.append(f"not {WORKERS} workers, each an original or a replacement, at the end: {after}")
    problem = f"gunicorn workers: {'; '.join(problems)}" if problems else ""
    verdict = f"{len(killed)} killed, each replaced" if not problems else "WRONG"
    return {**figures, "verdict": verdict}, problem


def _log_lines(server: Server) -> list[str]:
    text = server.log_path.read_text(errors="replace") if server.log_path.exists() else ""
    return [line for line in text.splitlines() if any(marker in line for marker in LOG_MARKERS)]


def report(result: dict, args: argparse.Namespace, started: datetime) -> int:
    finished = datetime.now(UTC)
    revision = checkout_revision()
    context = (
        f"{finished:%Y-%m-%d %H:%M} UTC · {result['database']} · {os.cpu_count()} CPUs · gunicorn {WORKERS} "
        f"sync workers · CONN_MAX_AGE={args.conn_max_age}, CONN_HEALTH_CHECKS=True · "
        f"{args.clients} clients · revision {revision}"
    )
    text = tables(result)
    print()
    print(context)
    print(text)
    if not args.no_record:
        write_record(
            prefix="faults-",
            started=started,
            finished=finished,
            revision=revision,
            about={"parameters": dict(vars(args))},
            results={"context": context, "table_markdown": text, "result": result},
            server={"conn_max_age": args.conn_max_age, "conn_health_checks": True},
        )
    for violation in result["violations"]:
        print(f"FAULTS FAILED: {violation}", file=sys.stderr)
    if not result["violations"]:
        print("\nfaults: every check passed")
    return 1 if result["violations"] else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.faults", description=__doc__.split("\n")[0])
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"in order, of: {', '.join(FAULTS)}")
    parser.add_argument("--clients", type=int, default=8, help="client threads, closed loop (default 8)")
    parser.add_argument("--pause", type=float, default=0.02, help="each client's pause between requests (s)")
    parser.add_argument("--before", type=float, default=4, help="traffic before the first fault (s)")
    parser.add_argument("--outage", type=float, default=3, help="how long `outage` keeps it down (s)")
    parser.add_argument("--after", type=float, default=6, help="traffic after each fault (s)")
    parser.add_argument("--timeout", type=float, default=10, help="each request's timeout (s)")
    parser.add_argument("--recovery-limit", type=float, default=5, help="503s allowed this long after (s)")
    parser.add_argument("--kills", type=int, default=4, help="workers `worker-kill` kills (default 4)")
    parser.add_argument(
        "--max-kills",
        type=int,
        default=12,
        help="more kills, up to this many, until one has cut off a registration in flight (default 12)",
    )
    parser.add_argument(
        "--kill-every", type=float, default=0.5, help="pause after a killed worker's replacement appeared (s)"
    )
    parser.add_argument(
        "--retries", type=int, default=3, help="times a request without an answer is sent again"
    )
    parser.add_argument("--events", type=int, default=400, help="events (a quarter without a seat limit)")
    parser.add_argument("--users", type=int, default=100, help="signed-in users (sessions made in setup)")
    parser.add_argument(
        "--conn-max-age",
        type=int,
        default=CONN_MAX_AGE,
        help=f"DB_CONN_MAX_AGE (default {CONN_MAX_AGE}, the bench's)",
    )
    parser.add_argument(
        "--sweep-events",
        type=int,
        default=40,
        help="payment-sweep: paid events with waiting lists (default 40)",
    )
    parser.add_argument(
        "--sweep-seats",
        type=int,
        default=5,
        help="payment-sweep: overdue registrations per event (default 5)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-record", action="store_true", help="write no bench/results/faults-*.json")
    parser.add_argument("--keep", action="store_true", help="keep the logs also after a run that passed")
    parser.add_argument("--time-limit", type=int, default=600, help="the whole run, setup included (s)")
    args = parser.parse_args(argv)
    args.faults = [name.strip() for name in args.faults.split(",") if name.strip()]
    if not args.faults or any(name not in FAULTS for name in args.faults):
        parser.error(f"--faults takes a comma-separated list of {', '.join(FAULTS)}")
    if args.clients < 1 or args.events < 4 or args.users < 1 or args.timeout <= 0:
        parser.error("--clients, --users must be ≥ 1, --events ≥ 4 and --timeout > 0")
    if args.kills < 1 or args.kill_every < 0 or args.retries < 0:
        parser.error("--kills must be ≥ 1, --kill-every and --retries ≥ 0")
    if args.sweep_events < 1 or args.sweep_seats < 1:
        parser.error("--sweep-events and --sweep-seats must be ≥ 1")
    why = unavailable()
    if why:
        print(f"faults cannot run here: {why}", file=sys.stderr)
        return 2

    def stop(signum: int, frame: object) -> None:
        why = "ran past its time limit" if signum == signal.SIGALRM else f"got {signal.Signals(signum).name}"
        raise Stop(why)

    for signum in (signal.SIGALRM, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.alarm(args.time_limit)
    started = datetime.now(UTC)
    state: dict = {}
    result = None
    try:
        result = measure(args, state)
    except (BenchError, HarnessError, Stop, KeyboardInterrupt) as error:
        print(f"\nfaults failed: {type(error).__name__}: {error}", file=sys.stderr)
    finally:
        signal.alarm(0)
        keep = args.keep or result is None or bool(result["violations"])
        if "server" in state:
            state["server"].stop()
        if "cluster" in state:
            state["cluster"].destroy(keep=keep)
        if "workdir" in state:
            if keep:
                print(f"server log kept in {state['workdir']}", file=sys.stderr)
            else:
                shutil.rmtree(state["workdir"], ignore_errors=True)
    if result is None:
        return 1
    return report(result, args, started)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
