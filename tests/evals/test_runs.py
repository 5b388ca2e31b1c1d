"""The runner end to end: `python -m evals` against one seeded server, in Chromium with WebMCP and over
the site's MCP endpoint (`--via mcp`, the SDK's client, no browser).

Each run is a subprocess (its own Playwright and Chromium, or its own MCP client), all against the one
server this module starts. Model mode talks to the STUB model service (evals/stub_model.py) on
127.0.0.1: it replaces an outside model service, which cannot run here, with scripted policies, so these
tests check the loop, the trace and the grader — not any model's judgement.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evals.bank import load_bank
from evals.server import PROJECT_DIR, SeededServer
from evals.stub_model import StubModelServer
from harness.chromium import CHROMIUM

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.own_database]


def in_chromium(test):
    """The WebMCP path: a real Chromium (the MCP path needs none)."""
    skip = pytest.mark.skipif(
        not CHROMIUM.exists(), reason="Debian's chromium is not installed (make chromium)"
    )
    return pytest.mark.browser(skip(test))


@pytest.fixture(scope="module")
def server():
    with SeededServer() as running:
        yield running


@pytest.fixture(scope="module")
def site(server):
    return server.base_url


@pytest.fixture(scope="module")
def site_database(server):
    """What the runner (with --base-url) needs to reach this site's database for the seat steps."""
    env = server.env()
    return {key: env[key] for key in ("DJANGO_SETTINGS_MODULE", "EVALS_SQLITE_PATH", "DEBUG")}


@pytest.fixture(scope="module")
def stub():
    with StubModelServer() as server:
        yield server


def run_evals(tmp_path: Path, *args: str, env: dict | None = None) -> tuple[int, dict, str]:
    reports = tmp_path / "reports"
    environment = {key: value for key, value in os.environ.items() if not key.startswith("EVALS_")}
    environment.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "evals", *args, "--reports", str(reports)],
        cwd=PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    [report_file] = reports.glob("*.json")
    return done.returncode, json.loads(report_file.read_text(encoding="utf-8")), done.stdout + done.stderr


def by_name(report: dict) -> dict[str, dict]:
    return {entry["name"]: entry for entry in report["cases"]}


@in_chromium
def regrade(report: dict, reports: Path) -> subprocess.CompletedProcess:
    """`python -m evals grade` on a run's JSON report, writing the new report under `reports`."""
    return subprocess.run(
        [sys.executable, "-m", "evals", "grade", report["files"]["json"], "--reports", str(reports)],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_smoke_runs_every_case_of_the_bank_and_each_passes(site, site_database, tmp_path):
    """No model: every case's expected calls on the live pages, one Chromium, one server."""
    code, report, output = run_evals(tmp_path, "smoke", "--base-url", site, env=site_database)
    bank = load_bank()
    assert code == 0, output
    assert report["totals"] == {
        "pass": len(bank),
        "fail": 0,
        "error": 0,
        "rerun_required": 0,
        "not_applicable": 0,
        "total": len(bank),
    }
    assert report["via"] == "webmcp" and "mcp" not in report
    assert [entry["name"] for entry in report["cases"]] == [case.name for case in bank]
    assert output.count("] PASS") == len(bank)  # one progress line per case
    start = report["health"]["start"]
    assert start["revision"] and start["toolCatalogueFingerprint"].startswith("sha256:")
    assert report["health"]["end"] == start
    cases = by_name(report)
    for entry in cases.values():
        assert entry["health"]["before"]["revision"] == start["revision"]
    register = next(entry for name, entry in cases.items() if name.startswith("WRITE-03"))
    [call] = register["trace"]["calls"]
    assert call["confirmedByRunner"] is True and call["result"]["registration"]["status"] == "confirmed"
    assert register["trace"]["setup"]["signedIn"]["via"] == "/accounts/signup/"
    blocked = next(entry for name, entry in cases.items() if name.startswith("RECOVERY-02"))
    assert [c["result"]["ok"] for c in blocked["trace"]["calls"]] == [False, True]
    assert all(entry["trace"]["calls"] == [] for name, entry in cases.items() if name.startswith("NO-"))
    # Conversations on one page: the earlier turn replayed, then the last turn on the page it left.
    for name, entry in cases.items():
        if name.startswith(("ARG-06", "ARG-04 en", "ARG-04 zh-Hant: zero results, the next")):
            [earlier] = entry["trace"]["history"]
            assert earlier["turn"] == 1 and earlier["result"]["count"] == 0, name
            assert earlier["args"]["level"] == "advanced", name
        if name.startswith(("ARG-06", "ARG-07")):
            [call] = entry["trace"]["calls"]
            assert call["args"] == {"query": "WebMCP"}
            assert [event["id"] for event in call["result"]["events"]] == ["evt-webmcp-intro"], name
        if name.startswith("ARG-07"):
            assert entry["trace"]["setup"]["url"].endswith("/events/?location=kaohsiung")
        # The waiting list: the full event's seeded seats back first; then a seat freed for this
        # case's fresh account by a seeded registrant's cancellation, and the reloaded page offers it.
        if name.startswith(("WRITE-05", "WRITE-06", "WRITE-07")):
            setup = entry["trace"]["setup"]
            assert setup["resetSeats"]["seats"] == {"capacity": 2, "confirmed": 2, "held": 0, "waiting": 0}
            [call] = entry["trace"]["calls"]
            if name.startswith("WRITE-05"):
                assert call["result"]["waiting"] is True and call["result"]["position"] == 1, name
                continue
            freed = setup["freeSeat"]
            assert freed["offeredTo"] == setup["signedIn"]["username"] and freed["cancelledBy"], name
            assert "register_event" in setup["toolsAfterFreeSeat"], name
            if name.startswith("WRITE-06"):
                assert call["result"]["waitlist"]["offer"]["expiresAt"], name
            else:
                assert call["confirmedByRunner"] is True, name
                assert call["result"]["registration"]["status"] == "confirmed", name
    text = Path(report["files"]["txt"]).read_text(encoding="utf-8")
    assert start["revision"] in text and "pass" in text
    assert Path(report["files"]["html"]).exists()


#: One case of each kind the loop meets (the smoke run above plays every case): a search, a refusal
#: recovered, a conversation on one page, an order of calls, a route-bound tool, a failed request,
#: each write with the person's yes, a sign-in hint and small talk. Both languages are among them.
GOOD_SAMPLE = [
    "SEL-01",
    "ARG-04 en",
    "ARG-05",
    "ARG-06 en",
    "ARG-07 zh-Hant",
    "ORD-01",
    "NAV-01",
    "RECOVERY-02",
    "WRITE-02",
    "WRITE-03",
    "WRITE-04",
    "WRITE-05 en",
    "WRITE-07 zh-Hant",
    "AUTH-01",
    "NO-01 en",
]


@in_chromium
def test_model_mode_with_the_good_stub_policy_passes_and_keeps_the_whole_trace(
    site, site_database, stub, tmp_path
):
    """The STUB model service stands in for an outside model (none can run here): its `stub-good`
    policy makes each case's expected calls, so the loop, the page calls and the grader must all pass."""
    only = [arg for item in GOOD_SAMPLE for arg in ("--only", item)]
    env = {
        **site_database,
        "EVALS_BASE_URL": stub.base_url,
        "EVALS_MODEL": "stub-good",
        "EVALS_API_KEY": "not-a-secret",
    }
    code, report, output = run_evals(tmp_path, "model", "--base-url", site, *only, env=env)
    assert code == 0, output
    assert report["totals"]["pass"] == report["totals"]["total"] >= 10
    assert {key: report["model"][key] for key in ("baseUrl", "model", "apiKeySet")} == {
        "baseUrl": stub.base_url,
        "model": "stub-good",
        "apiKeySet": True,
    }
    assert report["model"]["settings"]["temperature"] == 0.0 and report["model"]["settings"]["seed"]
    assert "not-a-secret" not in json.dumps(report)
    cases = by_name(report)
    ordered = next(entry for name, entry in cases.items() if name.startswith("ORD-01"))
    trace = ordered["trace"]
    assert trace["prompt"]["messages"][0]["content"].startswith("Search for WebMCP events")
    assert "Find an event" in trace["prompt"]["system"]  # the page's visible text
    tokens = trace["tokens"]
    assert tokens["requests"] == 3 and tokens["prompt"] > 0 and tokens["completion"] > 0
    assert report["tokens"]["prompt"] >= tokens["prompt"] and report["tokens"]["cases"] >= 10
    assert f"tokens {tokens['prompt']} prompt + {tokens['completion']} completion" in output
    assert [(c["functionName"], c["step"]) for c in trace["calls"]] == [
        ("search_events", 0),
        ("get_event_details", 1),
    ]
    assert trace["calls"][1]["result"]["event"]["id"] == trace["calls"][0]["result"]["events"][0]["id"]
    assert trace["finalAnswer"].startswith("stub: done") and trace["stoppedBy"] == "answer"
    assert {spec["function"]["name"] for spec in trace["toolsOffered"]} == {
        "search_events",
        "get_event_details",
        "save_event",
    }
    cancel = next(entry for name, entry in cases.items() if name.startswith("WRITE-04"))
    assert cancel["trace"]["calls"][0]["confirmedByRunner"] is True
    claim = cases["WRITE-07 zh-Hant: claim the held seat, the person confirms"]
    [call] = claim["trace"]["calls"]
    assert call["confirmedByRunner"] is True and call["result"]["registration"]["status"] == "confirmed"
    assert "register_event" in {spec["function"]["name"] for spec in claim["trace"]["toolsOffered"]}
    # A conversation on one page: the model is shown the earlier turn and plays the last one.
    same_page = cases["ARG-06 en: a new keyword search after a zero-result search, on the same page"]
    trace = same_page["trace"]
    assert [m["role"] for m in trace["prompt"]["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert trace["history"][0]["result"]["count"] == 0
    assert "URL: " in trace["prompt"]["system"]
    [call] = trace["calls"]
    assert call["args"] == {"query": "WebMCP"} and call["result"]["events"][0]["id"] == "evt-webmcp-intro"


@in_chromium
def test_a_model_that_relaxes_filters_after_zero_results_fails_the_arg_cases(site, stub, tmp_path):
    """The STUB model service (in place of an outside model, which cannot run here) drops filters after
    a zero result, as the seeds' ARG-01 attempt 1 did: the grader must fail it, also when regrading —
    and must not fail the two-turn ARG-04, where the person's next message let the level go."""
    env = {"EVALS_BASE_URL": stub.base_url, "EVALS_MODEL": "stub-relax-after-zero"}
    only = ["--only", "ARG-01", "--only", "the next message allows"]
    code, report, output = run_evals(tmp_path, "model", "--base-url", site, *only, env=env)
    assert code == 1, output
    allowed = [entry for entry in report["cases"] if entry["name"].startswith("ARG-04")]
    assert len(allowed) == 2 and all(entry["outcome"] == "pass" for entry in allowed), output
    for entry in allowed:
        assert entry["trace"]["history"][0]["result"]["count"] == 0
        assert entry["trace"]["calls"][0]["result"]["count"] >= 1
    relaxed = [entry for entry in report["cases"] if entry["name"].startswith("ARG-01")]
    assert len(relaxed) == 2
    for entry in relaxed:
        assert entry["outcome"] == "fail"
        assert "relaxed-after-zero" in {violation["rule"] for violation in entry["grading"]["violations"]}
        calls = entry["trace"]["calls"]
        assert calls[0]["result"]["count"] == 0 and "level" not in calls[1]["args"]

    regraded = regrade(report, tmp_path / "again")
    assert regraded.returncode == 1, regraded.stdout + regraded.stderr
    [again] = (tmp_path / "again").glob("*.json")
    regraded_outcomes = {
        entry["name"]: entry["outcome"] for entry in json.loads(again.read_text(encoding="utf-8"))["cases"]
    }
    assert regraded_outcomes == {entry["name"]: entry["outcome"] for entry in report["cases"]}
    assert sorted(regraded_outcomes.values()) == ["fail", "fail", "pass", "pass"]


@in_chromium
def test_a_model_that_calls_a_tool_for_small_talk_fails_the_no_cases(site, stub, tmp_path):
    """The STUB model service (in place of an outside model, which cannot run here) calls a tool for
    small talk: a NO case passes only without any call, so the grader must fail it."""
    env = {"EVALS_BASE_URL": stub.base_url, "EVALS_MODEL": "stub-tool-for-small-talk"}
    code, report, output = run_evals(tmp_path, "model", "--base-url", site, "--only", "NO-01", env=env)
    assert code == 1, output
    assert len(report["cases"]) == 2
    for entry in report["cases"]:
        assert entry["outcome"] == "fail"
        assert entry["reasons"][0].startswith("no-call-allowed")
        assert len(entry["trace"]["calls"]) == 1


# ---- the same bank over MCP (`--via mcp`): the site's /mcp with the SDK client, no browser ---------------

TOKEN = re.compile(r"are_[A-Za-z0-9]{16,}")  # a personal access token must never reach a report


def test_smoke_over_mcp_runs_every_applicable_case_and_each_passes(site, site_database, tmp_path):
    """Every case whose tools /mcp lists, with its expected calls over MCP; blockApi cases (they abort
    the browser's requests) are not applicable there, which is reported and is not a failure."""
    code, report, output = run_evals(tmp_path, "smoke", "--via", "mcp", "--base-url", site, env=site_database)
    bank = load_bank()
    blocked = [case.name for case in bank if case.meta.setup.get("blockApi")]
    on_page = [case.name for case in bank if case.meta.answerOnPage]  # an MCP client has no page
    assert code == 0, output
    assert len(blocked) == 2 and len(on_page) == 2
    assert report["totals"] == {
        "pass": len(bank) - len(blocked) - len(on_page),
        "fail": 0,
        "error": 0,
        "rerun_required": 0,
        "not_applicable": len(blocked) + len(on_page),
        "total": len(bank),
    }
    assert report["via"] == "mcp" and "browser" not in report
    assert report["mcp"]["url"] == f"{site}/mcp" and report["mcp"]["mode"] == "2026-07-28"
    assert "register_event" in report["mcp"]["tools"]
    assert output.count("] PASS") == len(bank) - len(blocked) - len(on_page)
    assert output.count("] NOT_APPLICABLE") == len(blocked) + len(on_page) and "via mcp" in output
    assert not TOKEN.search(json.dumps(report)), "a token leaked into the report"
    cases = by_name(report)
    for name in blocked:
        assert cases[name]["outcome"] == "not_applicable"
        assert cases[name]["reasons"][0].startswith("not applicable over MCP: blockApi")
    for name in on_page:
        assert cases[name]["reasons"][0].startswith(
            "not applicable over MCP: the answer is in the page's text"
        )
    # Route-bound: the detail page's `{}` goes over MCP with the page's event id.
    nav = next(entry for name, entry in cases.items() if name.startswith("NAV-01"))
    [call] = nav["trace"]["calls"]
    assert call["args"] == {"event_id": "evt-webmcp-intro"} and call["routeBound"]["caseArgs"] == {}
    assert "signedIn" not in nav["trace"]["setup"]  # reads are anonymous
    # A consequential tool: the site asks by elicitation, the runner accepts.
    register = next(entry for name, entry in cases.items() if name.startswith("WRITE-03"))
    [call] = register["trace"]["calls"]
    assert (
        call["confirmedByRunner"] is True and call["confirmation"]["by"] == "runner accepted the elicitation"
    )
    assert "Register eval-" in call["confirmation"]["message"]
    assert call["result"]["registration"]["status"] == "confirmed" and call["isError"] is False
    signed_in = register["trace"]["setup"]["signedIn"]
    assert signed_in["username"].startswith("eval-") and signed_in["via"].startswith(
        "manage.py create_access"
    )
    assert "token" not in signed_in
    # An anonymous save in the browser is an account's save over MCP; uiUpdated is not graded there.
    save = next(entry for name, entry in cases.items() if name.startswith("WRITE-01"))
    assert save["trace"]["setup"]["signedIn"]["why"].startswith("the case writes (save_event)")
    assert save["trace"]["calls"][0]["result"]["uiUpdated"] is False
    assert save["grading"]["ignoredOverMcp"] == ["uiUpdated"]
    # The anonymous refusal stays anonymous.
    for name, entry in cases.items():
        if name.startswith(("AUTH-01", "AUTH-02")):
            assert "signedIn" not in entry["trace"]["setup"], name
            assert entry["trace"]["calls"][0]["result"]["code"] == "AUTH_REQUIRED", name
    # Conversations: the earlier turn replayed over MCP first.
    for name, entry in cases.items():
        if name.startswith(("ARG-06", "ARG-04 en")):
            [earlier] = entry["trace"]["history"]
            assert earlier["result"]["count"] == 0, name
    # The waiting list: seats reset and freed for the case's token account, claimed by elicitation.
    for name, entry in cases.items():
        if name.startswith(("WRITE-06", "WRITE-07")):
            setup = entry["trace"]["setup"]
            assert setup["freeSeat"]["offeredTo"] == setup["signedIn"]["username"], name
            [call] = entry["trace"]["calls"]
            if name.startswith("WRITE-07"):
                assert call["confirmedByRunner"] is True, name
                assert call["result"]["registration"]["status"] == "confirmed", name
    text = Path(report["files"]["txt"]).read_text(encoding="utf-8")
    assert "via=mcp" in text and f"not_applicable {len(blocked) + len(on_page)}" in text
    assert report["files"]["json"].endswith("-smoke-mcp.json")

    regraded = regrade(report, tmp_path / "again")
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr
    [again] = (tmp_path / "again").glob("*.json")
    again = json.loads(again.read_text(encoding="utf-8"))
    assert again["via"] == "mcp" and again["totals"] == report["totals"]


MCP_MODEL_SAMPLE = ["SEL-02", "ARG-04 en", "ORD-01", "NAV-02", "RECOVERY-02", "WRITE-01", "WRITE-04"]
MCP_MODEL_SAMPLE += ["WRITE-07 en", "AUTH-02", "NO-03 en"]


def test_model_mode_over_mcp_with_the_good_stub_policy_passes(site, site_database, stub, tmp_path):
    """The STUB model service (in place of an outside model, which cannot run here) is offered the tools
    of /mcp's tools/list; its calls run over MCP. Route-bound tools need the event id there: `stub-good`
    takes it from the page's URL, as a good agent would; the runner adds nothing to a model's call."""
    only = [arg for item in MCP_MODEL_SAMPLE for arg in ("--only", item)]
    env = {**site_database, "EVALS_BASE_URL": stub.base_url, "EVALS_MODEL": "stub-good"}
    code, report, output = run_evals(tmp_path, "model", "--via", "mcp", "--base-url", site, *only, env=env)
    assert code == 0, output
    totals = report["totals"]
    assert totals["not_applicable"] == 2 and totals["pass"] == totals["total"] - 2 >= 8, output
    assert report["via"] == "mcp" and report["model"]["model"] == "stub-good"
    assert not TOKEN.search(json.dumps(report)), "a token leaked into the report"
    cases = by_name(report)
    nav = next(entry for name, entry in cases.items() if name.startswith("NAV-02"))
    trace = nav["trace"]
    assert {spec["function"]["name"] for spec in trace["toolsOffered"]} == set(report["mcp"]["tools"])
    details = next(s for s in trace["toolsOffered"] if s["function"]["name"] == "get_event_details")
    assert details["function"]["parameters"]["required"] == ["event_id"]
    assert "the site provides over MCP" in trace["prompt"]["system"]
    assert "URL: " + site + "/events/evt-kaohsiung-agent-evals/" in trace["prompt"]["system"]
    [call] = trace["calls"]
    assert call["args"] == {"event_id": "evt-kaohsiung-agent-evals"} and "routeBound" not in call
    claim = cases["WRITE-07 en: claim the held seat, the person confirms"]
    [call] = claim["trace"]["calls"]
    assert call["confirmedByRunner"] is True and call["result"]["registration"]["status"] == "confirmed"
    assert "Visible text" not in trace["prompt"]["system"]  # an MCP client has no page to read
    page_question = next(entry for name, entry in cases.items() if name.startswith("NO-03 en"))
    assert page_question["outcome"] == "not_applicable"
    assert "the answer is in the page's text" in page_question["reasons"][0]
