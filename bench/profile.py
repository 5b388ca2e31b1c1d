"""`make profile`: where one gunicorn worker spends its time serving a path, sampled by py-spy.

    .venv/bin/python -m bench.profile                              # the API search of the bench
    .venv/bin/python -m bench.profile --path /bench/floor?location=taipei --name floor
    .venv/bin/python -m bench.profile --mcp search_events --name mcp-search   # tools/call over /mcp
    .venv/bin/python -m bench.profile --mcp tools/list --name mcp-tools-list
    .venv/bin/python -m bench.profile --rush --name rush-refusal   # a rush attempt on a full event

The bench's own database (10 000 events, as `make bench`), one gunicorn sync worker, wrk keeping two
connections busy, and py-spy sampling that worker 250 times a second for the given seconds. It
writes `bench/profiles/<name>.svg` (a flame graph: open it in a browser) and `bench/profiles/<name>.txt`
(the frames that hold the most samples, inclusive), and prints the worker's requests per second.
bench/profiles/README.md says what the profiles showed and what was changed because of them.
"""

from __future__ import annotations

import collections
import functools
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from bench import load
from bench.figures import contention, mcp
from bench.figures.throughput import SEARCH_PATH
from bench.infra import PYTHON, ROOT, BenchError, gunicorn, log
from bench.session import Session, argument_parser
from bench.session import main as run_session
from harness.server import ServerProcess

PROFILES = ROOT / "bench" / "profiles"
EVENTS = 10_000
RATE = 250  # samples per second
# Frames every sample of the worker passes through (gunicorn's loop, the interpreter's start).
BOILERPLATE = (
    "Arbiter.",
    "SyncWorker.run",
    "BaseApplication.",
    "Application.",
    "Worker.init_process",
    "run (gunicorn",
    "_run_",
    "<module> (gunicorn",
)


def py_spy() -> str:
    found = shutil.which("py-spy", path=str(Path(PYTHON).parent)) or shutil.which("py-spy")
    if not found:
        raise BenchError("py-spy is not installed: `make install` puts it in .venv (dev dependency)")
    return found


def worker_pid(server: ServerProcess) -> int:
    assert server.process is not None
    children = subprocess.run(
        ["pgrep", "-P", str(server.process.pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    if len(children) != 1:
        raise BenchError(f"expected one gunicorn worker, found {children}")
    return int(children[0])


def top_frames(raw: Path, *, count: int = 45) -> str:
    """The frames holding the most samples (inclusive), from py-spy's collapsed stacks."""
    total = 0
    inclusive: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        total += int(samples)
        frames = {
            re.sub(r"\(/.*?/(site-packages|lib/python3\.\d+)/", "(", frame) for frame in stack.split(";")
        }
        for frame in frames:
            inclusive[frame.replace(f"({ROOT}/", "(")] += int(samples)
    lines = [f"{total} samples; share of samples in which the frame is on the stack (inclusive)", ""]
    served = [(frame, n) for frame, n in inclusive.most_common() if not frame.startswith(BOILERPLATE)]
    lines += [f"{100 * n / total:5.1f}%  {frame}" for frame, n in served[:count]]
    return "\n".join(lines) + "\n"


#: `--mcp`: the JSON-RPC request wrk posts to /mcp (the bench's MCP rows send the same).
MCP_BODIES = {
    "search_events": mcp.tool_call("search_events", mcp.FILTERS),
    "tools/list": mcp.TOOLS_LIST,
    "initialize": mcp.INITIALIZE,
}


def measure(
    session: Session, *, path: str, name: str, seconds: float, mcp_call: str = "", rush: bool = False
) -> dict:
    url = session.dbs.create("bench_agentready_profile")
    session.manage(url, "migrate")
    rush_file = session.workdir / "rush.json"
    rush_args = ("--contention-file", str(rush_file), "--users", "2", "--capacity", "1") if rush else ()
    session.populate(url, "profile", "--events", str(EVENTS), "--demo", *rush_args)
    server = ServerProcess(
        "profile",
        functools.partial(gunicorn, workers=1),
        env=session.env_for(url),
        log_path=session.workdir / "gunicorn-profile.log",
    )
    session.servers.append(server)  # type: ignore[arg-type]  (stopped with the session's servers)
    base = server.start()
    request: dict = {}
    if mcp_call:
        path = "/mcp"
        payload = MCP_BODIES[mcp_call]
        mcp.post_mcp(base, payload)  # checked: a JSON-RPC result
        request = {"headers": mcp.HEADERS, "body": json.dumps(payload, separators=(",", ":")).encode()}
    if rush:
        path, request = _rush_attempt(base, json.loads(rush_file.read_text()))
    load.wrk(base + path, connections=2, threads=1, seconds=2, **request)  # warm up
    PROFILES.mkdir(exist_ok=True)
    raw = session.workdir / f"{name}.raw"
    svg = PROFILES / f"{name}.svg"
    pid = worker_pid(server)
    measured: dict = {}
    traffic = threading.Thread(
        target=lambda: measured.update(
            slice=load.wrk(base + path, connections=2, threads=1, seconds=seconds + 2, **request)
        )
    )
    traffic.start()
    log(f"py-spy: worker {pid}, {seconds:.0f} s at {RATE} Hz while wrk requests {path}")
    for fmt, target in (("raw", raw), ("flamegraph", svg)):
        subprocess.run(
            [
                py_spy(),
                "record",
                "-p",
                str(pid),
                "-d",
                str(int(seconds / 2)),
                "-r",
                str(RATE),
                "-f",
                fmt,
                "-o",
                str(target),
                "--nonblocking",
            ],
            check=True,
            capture_output=True,
        )
    traffic.join()
    (PROFILES / f"{name}.txt").write_text(
        f"{path}{f' {mcp_call}' if mcp_call else ''}, one gunicorn worker, wrk at 2 connections, "
        f"py-spy at {RATE} Hz\n"
        + f"{measured['slice'].rate:.0f} requests/s while sampled (py-spy slows the worker)\n\n"
        + top_frames(raw)
    )
    return {"path": path, "rate": measured["slice"].rate, "svg": str(svg.relative_to(ROOT))}


def _rush_attempt(base: str, setup: dict) -> tuple[str, dict]:
    """The rush's request (bench/figures/contention.py) as most of its attempts meet it: the first
    person takes the event's one seat, and the second's attempt, with the same answers and ticket
    type, is then refused EVENT_FULL again and again (in a rush of 2,000 for 50 seats, 39 in 40)."""
    path = contention.CONTENTION_PATH.format(event=setup["event"])
    port = int(base.rsplit(":", 1)[1])
    cookies = (setup["session_cookie"], setup["csrf_cookie"])
    first, second = setup["sessions"]

    def attempt(key: str) -> dict:
        requests = load.registration_requests(
            port=port,
            path=path,
            sessions=[key],
            session_cookie=cookies[0],
            csrf_cookie=cookies[1],
            bodies=setup["bodies"],
        )
        return load.closed_loop(port=port, requests=requests, connections=1)

    taken, refused = attempt(first), attempt(second)
    if taken["statuses"] != {"201": 1} or refused["reasons"] != {"EVENT_FULL": 1}:
        raise BenchError(f"the rush attempt was not refused EVENT_FULL: {taken} {refused}")
    headers = load.registration_headers(*cookies, second)
    return path, {"headers": headers, "body": json.dumps(setup["bodies"][0]).encode()}


def main(argv: list[str]) -> int:
    parser = argument_parser("python -m bench.profile", __doc__)
    parser.add_argument("--path", default=SEARCH_PATH, help="the path to request (default: the API search)")
    parser.add_argument("--name", default="api-search", help="file name under bench/profiles/")
    parser.add_argument("--seconds", type=float, default=20, help="sampling time in all")
    parser.add_argument(
        "--mcp", choices=sorted(MCP_BODIES), default="", help="POST this JSON-RPC call to /mcp instead"
    )
    parser.add_argument(
        "--rush", action="store_true", help="POST the rush's registration attempt on a full event instead"
    )
    args = parser.parse_args(argv)
    load.require_wrk()

    def report(session: Session, result: dict) -> int:
        print(f"{result['path']}: {result['rate']:.0f} req/s while sampled; wrote {result['svg']} and .txt")
        return 0

    return run_session(
        "bench",
        lambda session: measure(
            session, path=args.path, name=args.name, seconds=args.seconds, mcp_call=args.mcp, rush=args.rush
        ),
        report,
        force_sqlite=args.sqlite,
        time_limit_s=900,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
