"""deploy/nginx.conf, run by Debian's nginx as written (harness/proxy.py wraps it): reads go to the
pages' pool, every other method to the writes' pool, the client's Host and address reach the site, and
the access log never shows a personal calendar address.

First with two small HTTP servers in this process that say which pool answered, then with the real
site: two gunicorn pools on the test database, a page read and a sign-in form posted as a browser
posts it (CSRF checks the Origin against the Host the proxy forwards).
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import global_settings, settings
from django.test import override_settings

from harness.proxy import ProxyProcess, main_conf, nginx, site_conf
from tests.factories import UserFactory
from tests.tasks import start_gunicorn

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # each test starts a process or a server


def _pool(name: str) -> type[BaseHTTPRequestHandler]:
    class Echo(BaseHTTPRequestHandler):
        """Answers every method with which pool it is and what it received."""

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            payload = {
                "ok": True,
                "pool": name,
                "method": self.command,
                "path": self.path,
                "body": body,
                "headers": {key.lower(): value for key, value in self.headers.items()},
            }
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Echo


@contextmanager
def _echo_server(name: str) -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _pool(name))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[ProxyProcess]:
    with _echo_server("pages") as pages, _echo_server("writes") as writes:
        process = ProxyProcess("test", pages=pages, writes=writes, workdir=tmp_path)
        process.start(timeout=20)
        try:
            yield process
        finally:
            process.stop()


def _send(
    base: str, method: str, path: str, *, data: bytes | None = None, headers: dict | None = None
) -> dict:
    request = urllib.request.Request(f"{base}{path}", data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        return json.loads(response.read() or b"{}")


def test_nginx_accepts_the_configuration_as_written(tmp_path: Path) -> None:
    (tmp_path / "site.conf").write_text(
        site_conf(port=18000, pages=18001, writes=18002, access_log=tmp_path / "a.log")
    )
    (tmp_path / "nginx.conf").write_text(main_conf(tmp_path))
    checked = subprocess.run(
        [nginx(), "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-e", "stderr"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert checked.returncode == 0, checked.stderr
    assert "syntax is ok" in checked.stderr


def test_reads_go_to_the_pages_pool_and_every_other_method_to_the_writes_pool(proxy: ProxyProcess) -> None:
    base = proxy.base_url
    assert _send(base, "GET", "/events/?q=AI")["pool"] == "pages"
    assert _send(base, "OPTIONS", "/api/events")["pool"] == "pages"
    head = urllib.request.urlopen(urllib.request.Request(f"{base}/events/", method="HEAD"), timeout=10)
    assert head.status == 200
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        answered = _send(base, method, "/api/me/saved/evt-1", data=b'{"x": 1}')
        assert (answered["pool"], answered["method"], answered["body"]) == ("writes", method, '{"x": 1}')
    log = proxy.logged(
        '"GET /events/?q=AI',
        '"OPTIONS ',
        '"HEAD ',
        *(f'"{method} ' for method in ("POST", "PUT", "PATCH", "DELETE")),
    )
    assert '"HEAD /events/ HTTP/1.1" 200' in log
    assert f"127.0.0.1:{proxy.pages}" in log and f"127.0.0.1:{proxy.writes}" in log
    for line in log.splitlines():  # each request names the pool that answered it
        pool = proxy.writes if re.search(r'"(POST|PUT|PATCH|DELETE) ', line) else proxy.pages
        assert line.endswith(f"127.0.0.1:{pool}"), line


def test_the_site_sees_the_clients_host_and_address_and_the_scheme(proxy: ProxyProcess) -> None:
    headers = _send(proxy.base_url, "POST", "/accounts/login/", data=b"")["headers"]
    assert headers["host"] == f"127.0.0.1:{proxy.port}"  # with the port: CSRF compares it with Origin
    assert headers["x-forwarded-for"] == "127.0.0.1"
    assert headers["x-forwarded-proto"] == "http"


def test_the_access_log_never_shows_a_calendar_address(proxy: ProxyProcess) -> None:
    secret = "kq3VbX9-the-feed-token"
    answered = _send(proxy.base_url, "GET", f"/calendar/{secret}.ics?lang=en")
    assert answered["path"] == f"/calendar/{secret}.ics?lang=en"  # the site still receives it
    log = proxy.logged('"GET /calendar/')
    assert secret not in log
    assert '"GET /calendar/***.ics?lang=en HTTP/1.1" 200' in log


def test_the_access_log_never_shows_an_unsubscribe_token(proxy: ProxyProcess) -> None:
    secret = "7:1xaBU1:HYywOjI_Lq_9399v0pOugJa"
    answered = _send(proxy.base_url, "POST", f"/accounts/reminders/unsubscribe/{secret}/")
    assert answered["path"] == f"/accounts/reminders/unsubscribe/{secret}/"
    log = proxy.logged('"POST /accounts/reminders/unsubscribe/')
    assert secret not in log
    assert '"POST /accounts/reminders/unsubscribe/***/ HTTP/1.1" 200' in log


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_real_site_behind_the_proxy_serves_pages_and_accepts_a_browsers_form(tmp_path: Path) -> None:
    # The app servers check the password with the site's own hasher, not the tests' MD5.
    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        UserFactory(username="behind-proxy")
    with ExitStack() as stack:
        servers = []
        for _ in range(2):
            # one site, two pools; DEBUG on, as the MCP judges run it: off, the static storage wants
            # `collectstatic`'s manifest, which the test run does not build
            process, base = start_gunicorn(DEBUG="1")
            stack.callback(lambda p=process: (p.terminate(), p.wait(timeout=10)))
            servers.append(int(base.rsplit(":", 1)[1]))
        proxy = ProxyProcess("site", pages=servers[0], writes=servers[1], workdir=tmp_path)
        proxy.start(timeout=20)
        stack.callback(proxy.stop)
        base = proxy.base_url

        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        assert opener.open(f"{base}/events/", timeout=10).status == 200
        page = opener.open(f"{base}/accounts/login/", timeout=10).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, page[:1000]
        form = {
            "csrfmiddlewaretoken": token.group(1),
            "username": "behind-proxy",
            "password": "correct-horse-battery",
        }
        signed_in = urllib.request.Request(
            f"{base}/accounts/login/",
            data=urllib.parse.urlencode(form).encode(),
            headers={"Origin": base, "Referer": f"{base}/accounts/login/"},
        )
        try:
            with opener.open(signed_in, timeout=10) as answer:
                assert answer.status == 200  # the page the sign-in redirected to
        except urllib.error.HTTPError as error:
            raise AssertionError(f"sign-in through the proxy: {error.code} {error.read()[:800]!r}") from error
        assert any(cookie.name == settings.SESSION_COOKIE_NAME for cookie in jar)

    log = proxy.logged('"POST /accounts/login/')
    post = next(line for line in log.splitlines() if '"POST /accounts/login/' in line)
    assert " 302 " in post and post.endswith(f"127.0.0.1:{servers[1]}")
    assert all(line.endswith(f"127.0.0.1:{servers[0]}") for line in log.splitlines() if '"GET ' in line)
