"""The official MCP conformance suite, an outside judge, against `/mcp` in both eras we answer (E2).

`conformance server --suite all --spec-version V` for V = 2026-07-28 and the legacy 2025-11-25: every
server scenario of that version, the draft and pending ones included (the default "active" suite
leaves out every 2026-07-28-only scenario: server-stateless, caching, http-header-validation, the
input-required ones). What we knowingly fail is listed, check by check with its reason, in
`conformance-baseline.yml`; the suite exits non-zero on any other failure and on a listed check that
now passes, and so does this test.

The site runs in its own process (`manage.py runserver`, threaded) on the test database rather than in
pytest's live-server thread: a request that never ends (see the baseline's BUG entries) then costs
nothing once the process is stopped, instead of spinning in the test process for the rest of the run.
Evidence levels (E1–E4): docs/evidence.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.server import ServerProcess
from tests.factories import EventFactory

from .judges import CONFORMANCE_CLI, require, run_node, site_process

pytestmark = [pytest.mark.judges, pytest.mark.django_db(transaction=True)]

BASELINE = Path(__file__).with_name("conformance-baseline.yml")
SPEC_VERSIONS = ["2026-07-28", "2025-11-25"]
FAILING = {"FAILURE", "WARNING"}  # the suite's baseline counts a WARNING as a failure
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def site(tmp_path):
    """`/mcp` of a site in its own process, on the test database, with one published event."""
    require(CONFORMANCE_CLI)  # skip before starting anything
    EventFactory(public_id="evt-conformance", title="WebMCP conformance")
    with site_process("mcp-conformance", tmp_path / "server.log", debug=False) as server:
        yield server


def baseline_entries() -> set[str]:
    return set(re.findall(r"^\s*-\s+([^\s#]+)", BASELINE.read_text(), re.MULTILINE))


def failing_checks(results: Path) -> dict[str, dict]:
    """`scenario:check-id` of every failing check in a results directory, with the check."""
    found = {}
    for path in sorted(results.glob("*/checks.json")):
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT[\d-]+Z$", "", path.parent.name)
        for check in json.loads(path.read_text()):
            if check.get("status") in FAILING:
                found[f"{scenario}:{check['id']}"] = check
    return found


@pytest.mark.parametrize("spec_version", SPEC_VERSIONS)
def test_conformance_suite_finds_nothing_outside_the_baseline(site, tmp_path, spec_version):
    results = tmp_path / "results"
    finished = run_node(
        CONFORMANCE_CLI,
        "server",
        "--url",
        f"{site.base_url}/mcp",
        "--suite",
        "all",
        "--spec-version",
        spec_version,
        "--expected-failures",
        str(BASELINE),
        "--output-dir",
        str(results),
        cwd=tmp_path,
        timeout=600,
    )
    failing = failing_checks(results)
    assert failing, (
        f"the suite reported no checks at all:\n{finished.stdout[-3000:]}\n{finished.stderr[-3000:]}"
    )
    if finished.returncode != 0:
        pytest.fail(verdict(spec_version, finished, failing, site), pytrace=False)


def verdict(spec_version: str, finished, failing: dict[str, dict], site: ServerProcess) -> str:
    """The suite's own verdict (unexpected failures, stale baseline entries), each unexpected failure's
    details from checks.json, and the end of the server's log."""
    output = ANSI.sub("", finished.stdout)
    starts = [output.find(mark) for mark in ("Stale baseline", "Unexpected failures") if mark in output]
    entries = baseline_entries()
    unexpected = [
        f"  {key} [{check['status']}] {check.get('errorMessage', '')}\n"
        f"    {json.dumps(check.get('details'))[:600]}"
        for key, check in failing.items()
        if key not in entries
    ]
    return "\n".join(
        [
            f"conformance --spec-version {spec_version}: exit {finished.returncode}",
            output[min(starts) :] if starts else output[-3000:],
            finished.stderr[-2000:],
            "Failing checks not in tests/mcp/conformance-baseline.yml:",
            *unexpected,
            "End of the server log:",
            site.log_tail(15),
        ]
    )
