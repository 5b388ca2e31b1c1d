"""Load: wrk (Debian's `wrk`) for throughput and latency, a small asyncio client for the registration rush.

Two sides are always measured in the same run, in alternating slices (A B B A A B …), so a burst of
load from something else on the machine hits both sides alike and cancels in their ratio.

Why slices rather than alternating request by request: a closed-loop load generator that alternates
per request sends exactly as many requests to each side, so both get the same throughput by
construction and the slower side only shows up as latency. Slices give each side the whole server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import shutil
import statistics
import subprocess
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


def wrk(
    url: str,
    *,
    connections: int,
    threads: int,
    seconds: float,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> Slice:
    """`body`: a POST of these bytes instead of a GET (the MCP rows' JSON-RPC requests)."""
    assert url.startswith("http://127.0.0.1:"), url
    script = REPORT_SCRIPT
    if body is not None:
        script = (
            REPORT_SCRIPT.parent / "results" / "tmp" / f"post-{hashlib.sha256(body).hexdigest()[:16]}.lua"
        )
        script.parent.mkdir(parents=True, exist_ok=True)
        assert body.isascii(), "wrk scripts take ASCII bodies"
        setup = f'wrk.method = "POST"\nwrk.body = {json.dumps(body.decode())}\n'
        script.write_text(setup + REPORT_SCRIPT.read_text())
    args = [
        require_wrk(),
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",  # wrk takes whole seconds
        "--timeout",
        "5s",
        *(part for name, value in (headers or {}).items() for part in ("-H", f"{name}: {value}")),
        "-s",
        str(script),
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
    sides: dict[str, str],
    *,
    rounds: int,
    seconds: float,
    connections: int,
    threads: int,
    warmup: float,
    headers: dict[str, dict[str, str]] | None = None,
    bodies: dict[str, bytes] | None = None,
) -> dict[str, list[Slice]]:
    """Measure each side `rounds` times in alternating order after one unrecorded warm-up slice each;
    `headers` are the request headers of the sides that send any (cookies, If-None-Match), `bodies` the
    POST bodies of the sides that post."""
    names = list(sides)
    sent = headers or {}
    posted = bodies or {}
    for name in names:
        wrk(
            sides[name],
            connections=connections,
            threads=threads,
            seconds=warmup,
            headers=sent.get(name),
            body=posted.get(name),
        )
    slices: dict[str, list[Slice]] = {name: [] for name in names}
    for index in range(rounds):
        order = names if index % 2 == 0 else list(reversed(names))
        for name in order:
            measured = wrk(
                sides[name],
                connections=connections,
                threads=threads,
                seconds=seconds,
                headers=sent.get(name),
                body=posted.get(name),
            )
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
class Answer:
    status: int  # 0: no answer (the error says why)
    reason: str  # the envelope's reason; "CREATED" for a 201
    seconds: float
    error: str = ""


def request_bytes(
    method: str, path: str, *, port: int, headers: dict[str, str] | None = None, body: bytes = b""
) -> bytes:
    """One HTTP/1.0 request (the server closes the connection after its answer, as gunicorn's sync
    workers do anyway, and never chunks it)."""
    lines = [f"{method} {path} HTTP/1.0", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def registration_requests(
    *,
    port: int,
    path: str,
    sessions: list[str],
    session_cookie: str,
    csrf_cookie: str,
    bodies: list[dict] | None = None,
) -> list[bytes]:
    """One `POST path` per signed-in person (session cookie, CSRF cookie and header), the n-th with
    `bodies[n % len(bodies)]` as its JSON (answers, a ticket type), or no body."""
    return [
        request_bytes(
            "POST",
            path,
            port=port,
            headers=registration_headers(session_cookie, csrf_cookie, key),
            body=json.dumps(bodies[n % len(bodies)]).encode() if bodies else b"",
        )
        for n, key in enumerate(sessions)
    ]


def registration_headers(session_cookie: str, csrf_cookie: str, key: str) -> dict[str, str]:
    """A signed-in person's JSON write: their session cookie, the CSRF cookie and its header."""
    return {
        "Cookie": f"{session_cookie}={key}; {csrf_cookie}={CSRF}",
        "X-CSRFToken": CSRF,
        "Content-Type": "application/json",
        "Accept": "application/json",
    }


def closed_loop(
    *, port: int, requests: list[bytes], connections: int, seconds: float | None = None, timeout: float = 120
) -> dict:
    """`connections` clients, each sending its next request as soon as its last one is answered.

    With `seconds=None` every request of `requests` is sent exactly once (a rush of distinct people);
    otherwise `requests[0]` is sent again and again until `seconds` have passed. The time is from the
    first request to the last answer. One asyncio loop in this process: no thread waits for a lock
    of the interpreter, so a slow answer is the server's. wrk keeps every connection busy for a
    duration instead, so it cannot send each person's request exactly once.
    """
    return asyncio.run(_closed_loop(port, requests, connections, seconds, timeout))


async def _closed_loop(
    port: int, requests: list[bytes], connections: int, seconds: float | None, timeout: float
) -> dict:
    answers: list[Answer] = []
    pending = iter(requests) if seconds is None else None
    began = time.perf_counter()
    deadline = began + (seconds or 0)

    async def client() -> None:
        while True:
            if pending is not None:
                payload = next(pending, None)
                if payload is None:
                    return
            elif time.perf_counter() >= deadline:
                return
            else:
                payload = requests[0]
            answers.append(await _exchange(port, payload, timeout))

    await asyncio.gather(*(client() for _ in range(connections)))
    elapsed = time.perf_counter() - began
    statuses: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for answer in answers:
        statuses[str(answer.status)] = statuses.get(str(answer.status), 0) + 1
        reasons[answer.reason or "-"] = reasons.get(answer.reason or "-", 0) + 1
    latencies = sorted(answer.seconds for answer in answers)
    return {
        "requests": len(answers),
        "seconds": round(elapsed, 3),
        "rate": round(len(answers) / elapsed, 1),
        "statuses": statuses,
        "reasons": reasons,
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "client_errors": [answer.error for answer in answers if answer.error][:5],
    }


async def _exchange(port: int, payload: bytes, timeout: float) -> Answer:
    started = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
        try:
            writer.write(payload)
            data = await asyncio.wait_for(reader.read(), timeout)  # to the end: the server closes
        finally:
            writer.close()
        head, _, body = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
    except (OSError, TimeoutError, ValueError, IndexError) as error:
        return Answer(0, "", time.perf_counter() - started, f"{type(error).__name__}: {error}")
    seconds = time.perf_counter() - started
    if status == 201:
        return Answer(status, "CREATED", seconds)
    if status == 200 or not body.startswith(b"{"):
        return Answer(status, "", seconds)
    try:
        reason = str(json.loads(body).get("reason", ""))
    except ValueError:
        reason = ""
    return Answer(status, reason, seconds)


def percentile(ordered: list[float], q: float) -> float:
    """The nearest-rank percentile of sorted values (0 for none)."""
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]
