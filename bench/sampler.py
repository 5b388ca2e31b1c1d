"""Another visitor, at a low steady rate: `GET path` every 1/rate seconds, one at a time, each answer's
latency written as one JSON line (`{"t": start, "ms": latency, "status": …}`, `t` in `time.time()`
seconds) until the process is told to stop (SIGTERM or SIGINT).

A process of its own, so that its timings never wait for the interpreter lock of the load generator
beside it (bench/figures/contention.py starts it before the idle window and stops it after the rush).

    python -m bench.sampler --port 8123 --path /events/ --rate 10
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import sys
import time


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sampler")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/events/")
    parser.add_argument("--rate", type=float, default=10.0, help="requests per second")
    args = parser.parse_args(argv)
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    interval = 1 / args.rate
    next_at = time.monotonic()
    while not stopping:
        wall, started = time.time(), time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
        try:
            connection.request("GET", args.path, headers={"Accept": "text/html"})
            response = connection.getresponse()
            response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            status = 0
        finally:
            connection.close()
        elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
        sample = {"t": round(wall, 4), "ms": elapsed_ms, "status": status}
        sys.stdout.write(json.dumps(sample) + "\n")
        sys.stdout.flush()
        next_at = max(next_at + interval, time.monotonic())  # late: the next one now, no burst
        time.sleep(max(0.0, next_at - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
