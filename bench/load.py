"""Load: wrk (Debian's `wrk`) for throughput and latency, a small Python client for the contention run.

Two sides are always measured in the same run, in alternating slices (A B B A A B …), so a burst of
load from something else on the machine hits both sides alike and cancels in their ratio.

Why slices rather than alternating request by request: a closed-loop load generator that alternates
per request sends exactly as many requests to each side, so both get the same throughput by
construction and the slower side only shows up as latency. Slices give each side the whole server.
"""

from __future__ import annotations

import http.client
import json
import shutil
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass

from bench.infra import ROOT, BenchError, log

REPORT_SCRIPT = ROOT / "bench" / "report.lua"
CSRF = "b" * 32  # Django accepts its 32-character secret as the header token, equal to the cookie


def require_wrk() -> str:
    path = shutil.which("wrk")
    if path is None:
        raise BenchError("wrk is not installed: apt-get install -y wrk (make bench installs it)")
    return path


@dataclass(frozen=True)
class Slice:
    """One wrk run against one URL."""

    url: str
    requests: int
    seconds: float
    errors: dict
    latency_us: dict

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    @property
    def failed(self) -> int:
        return sum(self.errors.values())


def wrk(url: str, *, connections: int, threads: int, seconds: float) -> Slice:
    assert url.startswith("http://127.0.0.1:"), url
    args = [
        require_wrk(),
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",  # wrk takes whole seconds
        "--timeout",
        "5s",
        "-s",
        str(REPORT_SCRIPT),
        url,
    ]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 30, check=False)
    except subprocess.TimeoutExpired as error:
        raise BenchError(f"wrk did not finish: {' '.join(args)}") from error
    line = next((row for row in done.stdout.splitlines() if row.startswith("WRK_JSON ")), None)
    if done.returncode != 0 or line is None:
        raise BenchError(f"wrk failed ({done.returncode}): {done.stdout[-1500:]} {done.stderr[-1500:]}")
    data = json.loads(line.removeprefix("WRK_JSON "))
    if data["requests"] == 0:
        raise BenchError(f"wrk got no answer from {url}")
    return Slice(
        url=url,
        requests=data["requests"],
        seconds=data["duration_us"] / 1e6,
        errors=data["errors"],
        latency_us=data["latency_us"],
    )


def alternate(
    sides: dict[str, str], *, rounds: int, seconds: float, connections: int, threads: int, warmup: float
) -> dict[str, list[Slice]]:
    """Measure each side `rounds` times in alternating order after one unrecorded warm-up slice each."""
    names = list(sides)
    for name in names:
        wrk(sides[name], connections=connections, threads=threads, seconds=warmup)
    slices: dict[str, list[Slice]] = {name: [] for name in names}
    for index in range(rounds):
        order = names if index % 2 == 0 else list(reversed(names))
        for name in order:
            measured = wrk(sides[name], connections=connections, threads=threads, seconds=seconds)
            slices[name].append(measured)
            log(
                f"  {name:>8}: {measured.rate:8.1f} req/s  p50 {measured.latency_us['p50'] / 1000:6.1f} ms  "
                f"p99 {measured.latency_us['p99'] / 1000:6.1f} ms  errors {measured.failed}"
            )
    return slices


def summarize(slices: list[Slice]) -> dict:
    """Totals over the slices of one side; percentiles are the median of the slices' percentiles."""
    requests = sum(item.requests for item in slices)
    seconds = sum(item.seconds for item in slices)
    return {
        "requests": requests,
        "seconds": round(seconds, 3),
        "rate": round(requests / seconds, 1),
        "errors": sum(item.failed for item in slices),
        "p50_ms": round(statistics.median(item.latency_us["p50"] for item in slices) / 1000, 2),
        "p90_ms": round(statistics.median(item.latency_us["p90"] for item in slices) / 1000, 2),
        "p99_ms": round(statistics.median(item.latency_us["p99"] for item in slices) / 1000, 2),
        "worst_p99_ms": round(max(item.latency_us["p99"] for item in slices) / 1000, 2),
        "mean_ms": round(statistics.fmean(item.latency_us["mean"] for item in slices) / 1000, 2),
        "slices": [
            {"rate": round(item.rate, 1), "errors": item.errors, "latency_us": item.latency_us}
            for item in slices
        ],
    }


# ---- contention ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    status: int
    reason: str
    error: str = ""


def rush(*, port: int, path: str, sessions: list[str], session_cookie: str, csrf_cookie: str) -> dict:
    """One POST per session, all released at once by a barrier; wall time from release to last answer.

    Python rather than wrk: wrk keeps every connection busy for a duration, so it cannot send exactly
    one request per user, and it does not read each answer's envelope.
    """
    count = len(sessions)
    barrier = threading.Barrier(count + 1, timeout=60)
    attempts: list[Attempt | None] = [None] * count
    finished: list[float] = [0.0] * count

    def attempt(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        headers = {
            "Cookie": f"{session_cookie}={sessions[index]}; {csrf_cookie}={CSRF}",
            "X-CSRFToken": CSRF,
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        try:
            barrier.wait()
            connection.request("POST", path, body=b"", headers=headers)
            response = connection.getresponse()
            body = response.read()
            finished[index] = time.perf_counter()
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = {}
            reason = "CREATED" if response.status == 201 else str(parsed.get("reason", ""))
            attempts[index] = Attempt(status=response.status, reason=reason)
        except Exception as error:
            finished[index] = time.perf_counter()
            attempts[index] = Attempt(status=0, reason="", error=f"{type(error).__name__}: {error}")
        finally:
            connection.close()

    previous_stack = threading.stack_size(512 * 1024)  # 500 threads: small stacks are plenty
    try:
        threads = [threading.Thread(target=attempt, args=(index,), daemon=True) for index in range(count)]
        for thread in threads:
            thread.start()
    finally:
        threading.stack_size(previous_stack)
    barrier.wait()
    started = time.perf_counter()
    deadline = started + 180
    for thread in threads:
        thread.join(timeout=max(0.1, deadline - time.perf_counter()))
    if any(thread.is_alive() for thread in threads):
        raise BenchError("contention: some requests had no answer within 180 s")
    elapsed = max(finished) - started
    statuses: dict[str, int] = {}
    reasons: dict[str, int] = {}
    errors = []
    for item in attempts:
        assert item is not None
        statuses[str(item.status)] = statuses.get(str(item.status), 0) + 1
        reasons[item.reason or "-"] = reasons.get(item.reason or "-", 0) + 1
        if item.error:
            errors.append(item.error)
    return {
        "attempts": count,
        "seconds": round(elapsed, 3),
        "attempts_per_s": round(count / elapsed, 1),
        "statuses": statuses,
        "reasons": reasons,
        "client_errors": errors[:5],
    }
