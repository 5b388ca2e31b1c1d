"""`make audit` (harness/audit.py): a known-vulnerable dependency fails, an accepted one passes with its
reason, what cannot be checked is said, and a registry that does not answer is an error.

PyPI and npm's advisory service are outside this machine, so a stand-in for each runs here on
127.0.0.1 and answers over real HTTP as they do; the npm side runs the real npm against it. The
audit against the real registries runs in CI (`make audit` in .ci/run).
"""

from __future__ import annotations

import gzip
import json
import shutil
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness import audit

pytestmark = pytest.mark.integration

PROJECT_DIR = Path(__file__).resolve().parents[2]

LOCK = """
version = 1
requires-python = ">=3.12"

[[package]]
name = "agentready-events"
version = "0.1.0"
source = { editable = "." }

[[package]]
name = "oldlib"
version = "1.0.0"
source = { registry = "REGISTRY/simple" }

[[package]]
name = "safelib"
version = "2.0.0"
source = { registry = "REGISTRY/simple" }

[[package]]
name = "vulnlib"
version = "3.1.0"
source = { registry = "REGISTRY/simple" }
"""

PYPI = {
    "oldlib": {"info": {"version": "1.2.0"}, "vulnerabilities": []},
    "safelib": {"info": {"version": "2.0.0"}, "vulnerabilities": []},
    "vulnlib": {
        "info": {"version": "3.1.0"},
        "vulnerabilities": [
            {
                "id": "PYSEC-2026-1",
                "aliases": ["GHSA-aaaa-bbbb-cccc", "CVE-2026-0001"],
                "summary": "Header injection",
                "fixed_in": ["3.1.1"],
                "withdrawn": None,
            },
            {
                "id": "PYSEC-2020-9",
                "aliases": [],
                "summary": "Withdrawn",
                "withdrawn": "2021-01-01T00:00:00Z",
            },
        ],
    },
}
NPM_ADVISORY = {
    "id": 1099999,
    "url": "https://github.com/advisories/GHSA-npmx-test-0001",
    "title": "Prototype pollution",
    "severity": "high",
    "vulnerable_versions": "<999.0.0",
    "cwe": [],
    "cvss": {"score": 7.5, "vectorString": None},
}


class Registry(BaseHTTPRequestHandler):
    """PyPI's `/pypi/<name>/json` and npm's bulk advisory endpoint, as they answer."""

    npm_requests: list[dict] = []

    def do_GET(self) -> None:
        parts = self.path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "pypi" and parts[2] == "json" and parts[1] in PYPI:
            self._answer(200, PYPI[parts[1]])
        else:
            self._answer(404, {})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip" or body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        asked = json.loads(body)
        Registry.npm_requests.append(asked)
        first = sorted(asked)[0]
        self._answer(200, {first: [NPM_ADVISORY]})

    def _answer(self, status: int, data: dict) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def registry():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    # A short poll: shutdown() waits for the loop to look, 0.5 s a test with the default.
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def lock(tmp_path: Path, registry: str) -> Path:
    path = tmp_path / "uv.lock"
    path.write_text(LOCK.replace("REGISTRY", registry))
    return path


def run(lock: Path, accepted: Path, **kwargs) -> tuple[int, list[str]]:
    said: list[str] = []
    code = audit.audit(lock=lock, accepted_path=accepted, say=said.append, **kwargs)
    return code, said


def test_a_known_vulnerability_fails_and_names_the_advisory(lock, tmp_path):
    code, said = run(lock, tmp_path / "none.toml")
    assert code == 1
    vulnerable = [line for line in said if line.startswith("VULNERABLE")]
    assert vulnerable == [
        "VULNERABLE: python vulnlib 3.1.0: PYSEC-2026-1 (GHSA-aaaa-bbbb-cccc, CVE-2026-0001) "
        "Header injection; fixed in 3.1.1"
    ]  # the withdrawn advisory is not a finding
    assert "unchecked: python oldlib 1.0.0: advisories are given for the newest release only (1.2.0)" in said
    assert said[-1].startswith("audit: 2 checked, 1 unchecked, 1 known vulnerabilities (0 accepted")


def test_an_accepted_finding_passes_with_its_reason_by_any_alias(lock, tmp_path):
    accepted = tmp_path / "accepted.toml"
    accepted.write_text(
        '[[finding]]\npackage = "vulnlib"\nid = "CVE-2026-0001"\nreason = "We never parse headers with it."\n'
    )
    code, said = run(lock, accepted)
    assert code == 0
    assert any(
        line.startswith("accepted: python vulnlib") and "We never parse headers" in line for line in said
    )
    assert not [line for line in said if line.startswith("VULNERABLE")]


def test_an_acceptance_without_a_reason_is_refused(lock, tmp_path):
    accepted = tmp_path / "accepted.toml"
    accepted.write_text('[[finding]]\npackage = "vulnlib"\nid = "PYSEC-2026-1"\nreason = " "\n')
    with pytest.raises(ValueError, match="reason"):
        run(lock, accepted)


def test_a_registry_that_does_not_answer_is_an_error_not_a_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(audit, "ATTEMPTS", 1)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    lock = tmp_path / "uv.lock"
    lock.write_text(LOCK.replace("REGISTRY", f"http://127.0.0.1:{port}"))
    code, said = run(lock, tmp_path / "none.toml")
    assert code == 2 and "PyPI could not be asked" in said[-1]


@pytest.mark.skipif(not (PROJECT_DIR / "lighthouse" / "package-lock.json").exists(), reason="no npm lockfile")
def test_npm_audit_of_a_committed_lockfile_reports_an_advisory(lock, tmp_path, registry):
    """The real npm reads lighthouse/package-lock.json and asks the stand-in for advisories."""
    folder = tmp_path / "lighthouse"
    folder.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy(PROJECT_DIR / "lighthouse" / name, folder / name)
    Registry.npm_requests.clear()
    code, said = run(lock, tmp_path / "none.toml", npm_folders=[folder], npm_registry=f"{registry}/")
    assert code == 1
    assert Registry.npm_requests and "lighthouse" in Registry.npm_requests[0]  # the lockfile's packages
    first = sorted(Registry.npm_requests[0])[0]
    assert f"VULNERABLE: npm {first} <999.0.0: GHSA-npmx-test-0001 [high] Prototype pollution" in said


def test_a_registry_that_refuses_advisories_is_unchecked_not_clean(lock, tmp_path):
    refusal = json.dumps({"message": "405 Method Not Allowed - POST …/advisories/bulk", "statusCode": 405})
    folder = tmp_path / "judges"
    folder.mkdir()
    (folder / "package-lock.json").write_text("{}")
    code, said = run(
        lock, tmp_path / "none.toml", npm_folders=[folder], run_npm=lambda args, cwd: (1, refusal)
    )
    assert "unchecked: npm judges: the registry did not give advisories (405 Method Not Allowed" in said[-3]
    assert said[-1].startswith("audit: 2 checked, 2 unchecked")
    assert code == 1  # vulnlib still fails the run
