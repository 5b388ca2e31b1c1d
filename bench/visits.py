"""Whole visits, each checked: a registration or an order made through several requests, as a client does.

wrk sends one request again and again; a registration is a sequence (a page, its form, the next page)
and each visitor is someone new, who may register once. Here every visit is a coroutine that sends its
requests one after the other on fresh HTTP/1.0 connections (gunicorn's sync workers close them anyway),
keeps its own cookies, reads the CSRF token from the form it posts, and checks each answer: the status,
and at the end that a registration or an order was completed. `connections` visits run at a time, each
connection starting its next visit when its last one ended (a closed loop, as bench/load.py's).

Both sites' visits go through this one client in the same process, so its own cost weighs on both.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlsplit

from bench.load import percentile

CSRF_INPUT = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
TIMEOUT = 60.0


class VisitFailed(Exception):
    """An answer that was not what the visit needed; the message says which request and why."""


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str:
        return next((value for key, value in self.headers if key == name.lower()), "")

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Visitor:
    """One person's connection to a site: its cookies, and the requests it sent."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)
    requests: int = 0

    async def send(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
        expect: tuple[int, ...] = (200,),
    ) -> Response:
        path = _path(path)
        lines = [f"{method} {path} HTTP/1.0", f"Host: 127.0.0.1:{self.port}", f"Content-Length: {len(body)}"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{key}={value}" for key, value in self.cookies.items()))
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        payload = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", self.port), TIMEOUT)
        try:
            writer.write(payload)
            data = await asyncio.wait_for(reader.read(), TIMEOUT)
        finally:
            writer.close()
        self.requests += 1
        head, _, rest = data.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        parsed = []
        for line in header_lines:
            name, _, value = line.partition(":")
            parsed.append((name.strip().lower(), value.strip()))
            if name.strip().lower() == "set-cookie":
                for key, morsel in SimpleCookie(value.strip()).items():
                    self.cookies[key] = morsel.value
        response = Response(status, parsed, rest)
        if status not in expect:
            raise VisitFailed(f"{method} {path} answered {status}: {rest[:200]!r}")
        return response

    async def form(
        self, path: str, data: dict[str, str], *, referer: str, expect: tuple[int, ...]
    ) -> Response:
        """A form posted as a browser posts it: urlencoded, with the page it came from."""
        return await self.send(
            "POST",
            path,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Referer": f"http://127.0.0.1:{self.port}{_path(referer)}",
            },
            body=urlencode(data).encode(),
            expect=expect,
        )


def _path(url: str) -> str:
    """A Location may be absolute: its path and query."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "") if parts.scheme else url


def csrf_token(page: Response, path: str) -> str:
    found = CSRF_INPUT.search(page.body)
    if found is None:
        raise VisitFailed(f"{path}: no form with a CSRF token")
    return found.group(1).decode()


Visit = Callable[[], Awaitable[int]]  # the visit; answers the requests it sent, raises VisitFailed


@dataclass(frozen=True)
class Outcome:
    completed: int
    failed: int
    requests: int
    seconds: float
    latencies: list[float]
    errors: list[str]

    def summary(self) -> dict:
        ordered = sorted(self.latencies)
        return {
            "completed": self.completed,
            "failed": self.failed,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "rate": round(self.completed / self.seconds, 2) if self.seconds else 0.0,
            "p50_ms": round(percentile(ordered, 50) * 1000, 1),
            "p99_ms": round(percentile(ordered, 99) * 1000, 1),
            "errors": self.errors[:5],
        }


def run(visits: Iterator[Visit], *, connections: int, seconds: float) -> Outcome:
    """Visits from `visits`, `connections` at a time, until `seconds` have passed or none is left."""
    return asyncio.run(_run(visits, connections, seconds))


async def _run(visits: Iterator[Visit], connections: int, seconds: float) -> Outcome:
    completed = failed = requests = 0
    latencies: list[float] = []
    errors: list[str] = []
    began = time.perf_counter()
    deadline = began + seconds

    async def worker() -> None:
        nonlocal completed, failed, requests
        while time.perf_counter() < deadline:
            visit = next(visits, None)
            if visit is None:
                return
            started = time.perf_counter()
            try:
                sent = await visit()  # then counted: `requests += await …` would read it before waiting
                requests += sent
                completed += 1
                latencies.append(time.perf_counter() - started)
            except (VisitFailed, OSError, TimeoutError, ValueError, IndexError, KeyError) as error:
                failed += 1
                errors.append(f"{type(error).__name__}: {error}")

    await asyncio.gather(*(worker() for _ in range(connections)))
    return Outcome(completed, failed, requests, time.perf_counter() - began, latencies, errors)


def merge(outcomes: list[Outcome]) -> dict:
    """One side's slices together: completed visits per second over all its time."""
    total = Outcome(
        completed=sum(item.completed for item in outcomes),
        failed=sum(item.failed for item in outcomes),
        requests=sum(item.requests for item in outcomes),
        seconds=sum(item.seconds for item in outcomes),
        latencies=[value for item in outcomes for value in item.latencies],
        errors=[error for item in outcomes for error in item.errors],
    )
    summary = total.summary()
    summary["requests_per_visit"] = round(total.requests / total.completed, 2) if total.completed else 0
    summary["slices"] = [round(item.completed / item.seconds, 2) for item in outcomes if item.seconds]
    return summary


def alternate(
    sides: dict[str, Iterator[Visit]], *, rounds: int, seconds: float, connections: int, warmup: float
) -> dict[str, dict]:
    """Each side's visits in alternating slices (A B B A …) after one unrecorded warm-up slice each, as
    bench/load.py's `alternate` does for wrk. `warmup_completed` counts the warm-up's completed visits
    too: they registered people or placed orders, which the database checks count."""
    from bench.infra import log

    names = list(sides)
    warm = {name: run(sides[name], connections=connections, seconds=warmup) for name in names}
    slices: dict[str, list[Outcome]] = {name: [] for name in names}
    for index in range(rounds):
        for name in names if index % 2 == 0 else list(reversed(names)):
            outcome = run(sides[name], connections=connections, seconds=seconds)
            slices[name].append(outcome)
            rate = outcome.completed / outcome.seconds if outcome.seconds else 0.0
            log(f"  {name:>14}: {rate:7.1f} visits/s  {outcome.requests} requests  failed {outcome.failed}")
    measured = {}
    for name in names:
        measured[name] = merge(slices[name])
        measured[name]["warmup_completed"] = warm[name].completed
        measured[name]["failed"] += warm[name].failed
        measured[name]["errors"] = (warm[name].errors + measured[name]["errors"])[:5]
    return measured
