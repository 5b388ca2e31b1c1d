"""nginx in front of two gunicorn pools, with the project's own site configuration (deploy/nginx.conf):
the layout docs/deployment.md recommends, run by the bench and the tests on 127.0.0.1.

The site configuration is used as it is written, with its three addresses (the two pools, the port
it listens on) and its access log's path replaced, inside a main configuration of our own that keeps
everything nginx writes (pid, temporary bodies, logs) in one directory and stays in the foreground,
so the harness's server process can start it, wait for `/health` through it and stop it.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from harness.revision import PROJECT_DIR
from harness.server import ServerError, ServerProcess

SITE_CONF = PROJECT_DIR / "deploy" / "nginx.conf"
#: What deploy/nginx.conf says, and what each becomes here.
PAGES_ADDRESS = "server 127.0.0.1:8001;"
WRITES_ADDRESS = "server 127.0.0.1:8002;"
LISTEN = "listen 8000;"
ACCESS_LOG = "/var/log/nginx/agentready-events.log"


def nginx() -> str:
    """Debian's nginx (`apt-get install nginx-light`; the make targets that need it install it)."""
    found = shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None
    )
    if found is None:
        raise ServerError("nginx is not installed: apt-get install -y nginx-light")
    return found


def site_conf(*, port: int, pages: int, writes: int, access_log: Path) -> str:
    """deploy/nginx.conf with the pools on `pages` and `writes`, listening on 127.0.0.1:`port`."""
    text = SITE_CONF.read_text()
    replacements = {
        PAGES_ADDRESS: f"server 127.0.0.1:{pages};",
        WRITES_ADDRESS: f"server 127.0.0.1:{writes};",
        LISTEN: f"listen 127.0.0.1:{port};",
        ACCESS_LOG: str(access_log),
    }
    for written, used in replacements.items():
        if text.count(written) != 1:
            raise ServerError(f"{SITE_CONF} no longer says {written!r} once: update harness/proxy.py")
        text = text.replace(written, used)
    return text


def main_conf(directory: Path) -> str:
    """nginx's main configuration around the site's: in the foreground, everything in `directory`."""
    temporary = "\n".join(
        f"    {kind}_temp_path {directory / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root root;\n" if os.geteuid() == 0 else ""  # its workers may write in `directory`
    return (
        f"daemon off;\n{user}worker_processes 1;\npid {directory / 'nginx.pid'};\n"
        "error_log stderr warn;\n"
        "events { worker_connections 4096; }\n"
        f"http {{\n{temporary}\n    include {directory / 'site.conf'};\n}}\n"
    )


class ProxyProcess(ServerProcess):
    """nginx on a free port of 127.0.0.1, sending reads to the gunicorn on `pages` and every other
    method to the one on `writes`; its access log is `access_log_path`."""

    def __init__(self, name: str, *, pages: int, writes: int, workdir: Path) -> None:
        self.directory = workdir / f"nginx-{name}"
        self.access_log_path = self.directory / "access.log"
        self.pages, self.writes = pages, writes
        super().__init__(name, self._command, env=dict(os.environ), log_path=workdir / f"nginx-{name}.log")

    def logged(self, *needles: str, timeout: float = 10.0) -> str:
        """The access log once it holds every one of `needles`: nginx writes a request's line after
        it has answered, so the client can have its answer before the line is there."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.access_log_path.read_text() if self.access_log_path.exists() else ""
            if all(needle in text for needle in needles) or time.monotonic() > deadline:
                return text
            time.sleep(0.02)

    def _command(self, port: int) -> list[str]:
        self.directory.mkdir(parents=True, exist_ok=True)
        conf = site_conf(port=port, pages=self.pages, writes=self.writes, access_log=self.access_log_path)
        (self.directory / "site.conf").write_text(conf)
        (self.directory / "nginx.conf").write_text(main_conf(self.directory))
        return [nginx(), "-p", str(self.directory), "-c", str(self.directory / "nginx.conf"), "-e", "stderr"]
