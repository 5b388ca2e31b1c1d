"""/health: version, revision, catalogue fingerprint and a real database check."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django_webmcp.registry import catalogue_fingerprint

pytestmark = pytest.mark.integration


@pytest.mark.django_db
def test_health_reports_version_revision_fingerprint_and_database(client):
    body = client.get("/health").json()
    assert body["ok"] is True and body["status"] == "ok" and body["database"] == "ok"
    assert body["version"] == settings.APP_VERSION
    assert body["revision"]
    assert body["toolCatalogueFingerprint"] == catalogue_fingerprint()
    assert body["toolCatalogueFingerprint"].startswith("sha256:")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow  # starts a process or a server
def test_health_api_and_pages_answer_503_when_the_database_is_unreachable():
    """A real server process whose DATABASE_URL points at a closed port."""
    port, dead_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://nobody@127.0.0.1:{dead_port}/none",
        "DEBUG": "0",
        "SECRET_KEY": "test-only",
        "APP_REVISION": "test-revision",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=Path(settings.BASE_DIR),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        bodies = {}
        for path in ("/health", "/api/events", "/events/"):
            for _ in range(100):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5)
                except urllib.error.HTTPError as error:
                    bodies[path] = (error.code, error.read())
                    break
                except OSError:
                    time.sleep(0.1)
        status, raw = bodies["/health"]
        health = json.loads(raw)
        assert status == 503
        assert health["ok"] is False and health["code"] == "TEMPORARY_FAILURE" and health["retryable"] is True
        assert health["database"] == "unreachable" and health["revision"] == "test-revision"
        assert "stateVersion" in health and health["stateVersion"] is None  # it could not be read
        status, raw = bodies["/api/events"]
        api = json.loads(raw)
        assert status == 503 and api["code"] == "TEMPORARY_FAILURE" and api["retryable"] is True
        assert "stateVersion" in api and api["stateVersion"] is None
        status, raw = bodies["/events/"]
        assert status == 503
        assert "Temporarily unavailable" in raw.decode() and "Traceback" not in raw.decode()
    finally:
        server.terminate()
        server.wait(timeout=10)
