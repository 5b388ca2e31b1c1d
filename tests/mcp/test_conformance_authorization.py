"""The official MCP conformance suite against our authorization server, signed in by a real browser (E2).

`conformance authorization --url <issuer> --client-id … --resource <issuer>/mcp` runs its two
authorization-server scenarios in order: `authorization-server-metadata-endpoint` (RFC 8414 metadata,
CIMD support) and `authorization-code-grant`, which prints an authorize URL, waits for the browser to
reach its own callback (`http://127.0.0.1:<port>/callback`), exchanges the code with PKCE as a public
client and checks state, `iss` (RFC 9207) and the token response. Here Chromium (Playwright) plays the
person: it opens that URL, signs in on /accounts/login/, presses "Allow" on the consent page and follows
the redirect to the suite. The suite has no baseline file for this command: every check must succeed
(a WARNING counts as a failure, as in test_conformance.py), and the token it was issued must be in the
database, for that person and that client, bound to our MCP endpoint.

The site runs in its own process on the test database, as for test_conformance.py, so the issuer
(SITE_URL) is its own address. Evidence levels (E1–E4): docs/evidence.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from django.conf import global_settings
from django.test import override_settings
from oauth2_provider.models import get_access_token_model, get_application_model

from harness.chromium import installed, launch
from harness.server import ServerProcess, free_port
from tests.factories import UserFactory

from . import test_conformance
from .judges import CONFORMANCE_CLI, require, site_process

pytestmark = [pytest.mark.judges, pytest.mark.django_db(transaction=True)]

ANSI = test_conformance.ANSI
FAILING = test_conformance.FAILING

CLIENT_ID = "conformance-authorization-suite"
USERNAME = "conformance-person"
PASSWORD = "a-known-password-for-the-suite"
SCENARIOS = ["authorization-server-metadata-endpoint", "authorization-code-grant"]
URL_TIMEOUT = 60  # the suite prints the authorize URL after the metadata scenario
BROWSER_TIMEOUT_MS = 30_000  # each navigation and click
EXIT_TIMEOUT = 60  # the suite exchanges the code and writes its results once the callback is reached


@pytest.fixture
def site(tmp_path):
    """As test_conformance.py's `site`, with DEBUG on: the sign-in and consent pages are pages."""
    with site_process("oauth-conformance", tmp_path / "server.log", debug=True) as server:
        yield server


@pytest.fixture
def chromium():
    """Skips (before the site is started) unless Debian's Chromium and Playwright are installed."""
    if not installed():
        pytest.skip("Debian's chromium is not installed (make test installs it with apt-get)")
    pytest.importorskip("playwright.sync_api")


def test_authorization_server_passes_the_conformance_suite(chromium, site, tmp_path):
    user = UserFactory(username=USERNAME)
    # The tests hash with MD5 (tests/conftest.py), which the site's process does not know: its hasher.
    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        user.set_password(PASSWORD)
    user.save()
    port = free_port()
    Application = get_application_model()
    application = Application.objects.create(
        name="MCP conformance suite",
        client_id=CLIENT_ID,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=f"http://127.0.0.1:{port}/callback",
        skip_authorization=False,
        registration_source=Application.RegistrationSource.MANUAL,
    )
    results = tmp_path / "results"
    suite = Suite(site.base_url, port, results, cwd=tmp_path)
    problem, callback, returncode = None, "", None
    try:
        authorize_url = suite.authorize_url(f"{site.base_url}/authorize?", timeout=URL_TIMEOUT)
        callback = sign_in_and_allow(authorize_url, port)
        returncode = suite.wait(timeout=EXIT_TIMEOUT)
    except Exception as error:  # reported below, with the suite's output and the server's log
        problem = error
    finally:
        suite.kill()
    if problem is not None:
        pytest.fail(f"{type(problem).__name__}: {problem}\n{suite.report(site)}", pytrace=False)

    checks = read_checks(results)
    found = {scenario for scenario, _check in checks}
    assert found == set(SCENARIOS), f"results for {sorted(found)} only\n{suite.report(site)}"
    failing = [
        f"  {scenario}:{check['id']} [{check['status']}] {check.get('errorMessage', '')}\n"
        f"    {json.dumps(check.get('details'))[:1500]}"
        for scenario, check in checks
        if check.get("status") in FAILING
    ]
    if failing or returncode != 0:
        pytest.fail(
            "\n".join([f"conformance authorization: exit {returncode}", *failing, suite.report(site)]),
            pytrace=False,
        )
    statuses = {(scenario, check["id"]): check["status"] for scenario, check in checks}
    assert statuses[("authorization-code-grant", "authorization-code-grant")] == "SUCCESS", statuses
    assert "iss=" in callback, f"the authorization response carries no iss (RFC 9207): {callback}"

    tokens = get_access_token_model().objects.filter(user=user, application=application)
    assert tokens.count() == 1, f"{tokens.count()} access tokens for the suite's client and that person"
    token = tokens.get()
    assert token.resource == [f"{site.base_url}/mcp"], token.resource  # RFC 8707: our /mcp only
    assert token.scope == "events:read", token.scope  # no scope asked: the default


class Suite:
    """`conformance authorization` in its own process group, its output read line by line by a thread."""

    def __init__(self, issuer: str, port: int, results: Path, *, cwd: Path) -> None:
        node = require(CONFORMANCE_CLI)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        self.process = subprocess.Popen(
            [
                str(node),
                str(CONFORMANCE_CLI),
                "authorization",
                "--url",
                issuer,
                "--client-id",
                CLIENT_ID,
                "--port",
                str(port),
                "--resource",
                f"{issuer}/mcp",
                "--output-dir",
                str(results),
            ],
            cwd=cwd,
            env={
                **os.environ,
                "PATH": f"{node.parent}{os.pathsep}{os.environ['PATH']}",
                "NO_COLOR": "1",
            },
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = ANSI.sub("", line.rstrip("\n"))
            self.output.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def authorize_url(self, prefix: str, *, timeout: float) -> str:
        """The first line of the suite's output that starts with `prefix` (the authorization endpoint)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"the suite exited ({self.process.wait()}) before printing {prefix}…")
            if line.strip().startswith(prefix):
                return line.strip()
        raise AssertionError(f"the suite printed no line starting with {prefix} within {timeout} s")

    def wait(self, *, timeout: float) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the suite did not exit within {timeout} s of the callback") from None

    def kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def report(self, site: ServerProcess) -> str:
        return "\n".join(
            [
                "Output of the suite:",
                *self.output[-80:],
                "End of the server log:",
                site.log_tail(25),
            ]
        )


def sign_in_and_allow(authorize_url: str, port: int) -> str:
    """Chromium opens the authorize URL, signs in when sent to the sign-in page, presses Allow on the
    consent page and follows the redirect to the suite's callback; the URL it reached.

    No ORM call in here: while Playwright's event loop runs, Django would refuse them (async-unsafe)."""
    callback = f"http://127.0.0.1:{port}/callback"
    with launch(headless=True) as browser:
        context = browser.new_context(locale="en", extra_http_headers={"Accept-Language": "en"})
        context.set_default_timeout(BROWSER_TIMEOUT_MS)
        try:
            page = context.new_page()
            page.goto(authorize_url)
            page.wait_for_url("**/accounts/login/**")
            page.fill("input[name=username]", USERNAME)
            page.fill("input[name=password]", PASSWORD)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url("**/authorize?**")
            assert page.title().startswith("Connect "), page.title()  # the consent page, in English
            with page.expect_navigation(url=f"{callback}?**"):
                page.get_by_role("button", name="Allow", exact=True).click()
            assert "OK" in page.content(), page.content()[:500]
            return page.url
        finally:
            context.close()


def read_checks(results: Path) -> list[tuple[str, dict]]:
    """(scenario, check) for every check of every checks.json the suite wrote."""
    found: list[tuple[str, dict]] = []
    for path in sorted(results.glob("*/checks.json")):
        name = path.parent.name.removeprefix("authorization-server-")
        scenario = next((s for s in SCENARIOS if name.startswith(f"{s}-")), name)
        found.extend((scenario, check) for check in json.loads(path.read_text()))
    return found
