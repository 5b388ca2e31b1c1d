"""Reports and grade mode, without a browser: files never overwritten, /health ties results to a release,
a saved trace graded again gives the same verdict, a failure stays recorded."""

from __future__ import annotations

import json

import pytest

from evals import report as reports
from evals.__main__ import main
from evals.bank import load_bank
from evals.runner import regrade, settle_outcomes

pytestmark = pytest.mark.unit

RELEASE = {"revision": "abc123", "toolCatalogueFingerprint": "sha256:one", "version": "0.1.0", "status": "ok"}
NEXT_RELEASE = {**RELEASE, "revision": "def456"}


def bank_case(prefix: str):
    return next(case for case in load_bank() if case.name.startswith(prefix))


def saved_entry(
    prefix: str, calls: list[dict], before=RELEASE, after=RELEASE, error=None, history=None
) -> dict:
    case = bank_case(prefix)
    trace = {"messages": case.messages, "calls": calls}
    if history is not None:
        trace["history"] = history
    return {
        "name": case.name,
        "case": case.as_dict(),
        "trace": trace,
        "health": {"before": before, "after": after},
        "outcome": "pass",
        "gradedOutcome": "pass",
        "error": error,
        "durationMs": 10,
    }


def saved_report(tmp_path, entries, start=RELEASE, end=RELEASE):
    data = {
        "kind": "agentready-evals-report",
        "formatVersion": 1,
        "mode": "model",
        "baseUrl": "http://127.0.0.1:1",
        "health": {"start": start, "end": end},
        "model": {"model": "some-model", "baseUrl": "http://127.0.0.1:2/v1", "apiKeySet": False},
        "cases": entries,
    }
    path = tmp_path / "saved.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


ZERO = {"ok": True, "count": 0, "events": [], "constraintsRelaxed": False, "requiresUserDecision": True}
FOUR = {"query": "Agent", "location": "kaohsiung", "price": "paid", "level": "advanced"}


def test_grade_mode_grades_saved_traces_again(tmp_path):
    saved = saved_report(
        tmp_path,
        [
            saved_entry("ARG-01 en", [{"functionName": "search_events", "args": FOUR, "result": ZERO}]),
            saved_entry(
                "ARG-01 zh-Hant",
                [
                    {"functionName": "search_events", "args": FOUR, "result": ZERO},
                    {"functionName": "search_events", "args": {**FOUR, "level": ""}, "result": ZERO},
                ],
            ),
            saved_entry("NO-01 en", [{"functionName": "search_events", "args": {}, "result": {"ok": True}}]),
            saved_entry("NO-02 en", []),
            saved_entry("WRITE-01", [], error="BrowserError: the page did not load"),
        ],
    )
    report, paths = regrade(saved, reports_dir=tmp_path / "reports")
    outcomes = {entry["name"][:14]: entry["outcome"] for entry in report["cases"]}
    assert outcomes == {
        "ARG-01 en: pai": "pass",
        "ARG-01 zh-Hant": "fail",
        "NO-01 en: smal": "fail",
        "NO-02 en: buy ": "pass",
        "WRITE-01 en: s": "error",
    }
    relaxed = report["cases"][1]
    assert relaxed["reasons"][0].startswith("relaxed-after-zero: call 1")
    assert report["gradedFrom"] == str(saved) and report["originalMode"] == "model"
    assert report["totals"] == {
        "pass": 2,
        "fail": 2,
        "error": 1,
        "rerun_required": 0,
        "not_applicable": 0,
        "total": 5,
    }
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["mode"] == "grade"
    assert "abc123" in paths["txt"].read_text(encoding="utf-8")


def test_a_changed_release_makes_results_rerun_required_and_keeps_the_verdict(tmp_path):
    search = [{"functionName": "search_events", "args": FOUR, "result": ZERO}]
    saved = saved_report(
        tmp_path,
        [saved_entry("ARG-01 en", search), saved_entry("NO-02 en", [], before=RELEASE, after=NEXT_RELEASE)],
    )
    report, _ = regrade(saved, reports_dir=tmp_path / "reports")
    assert [entry["outcome"] for entry in report["cases"]] == ["pass", "rerun_required"]
    assert report["cases"][1]["gradedOutcome"] == "pass"
    assert reports.exit_code(report) == 3

    whole_run = saved_report(tmp_path, [saved_entry("ARG-01 en", search)], end=NEXT_RELEASE)
    report, _ = regrade(whole_run, reports_dir=tmp_path / "reports")
    assert report["cases"][0]["outcome"] == "rerun_required"


def test_grade_mode_grades_the_earlier_turns_of_a_conversation_too(tmp_path):
    replayed = [
        {"functionName": "search_events", "args": FOUR, "result": {**ZERO, "appliedFilters": FOUR}, "turn": 1}
    ]
    webmcp = {"ok": True, "count": 1, "events": [{"id": "evt-webmcp-intro"}]}
    last_turn = [{"functionName": "search_events", "args": {"query": "WebMCP"}, "result": webmcp}]
    saved = saved_report(
        tmp_path,
        [
            saved_entry("ARG-06 en", last_turn, history=replayed),
            saved_entry("ARG-06 zh-Hant", last_turn),  # the earlier turn never happened on the page
        ],
    )
    report, paths = regrade(saved, reports_dir=tmp_path / "reports")
    assert [entry["outcome"] for entry in report["cases"]] == ["pass", "fail"]
    assert report["cases"][1]["reasons"] == [
        "history-differs: earlier-turn call 0 (search_events, after message 1) was not replayed"
    ]
    text = paths["txt"].read_text(encoding="utf-8")
    assert "[search_events] > search_events" in text


def test_a_fingerprint_change_alone_is_a_new_release():
    data = {
        "health": {"start": RELEASE, "end": {**RELEASE, "toolCatalogueFingerprint": "sha256:two"}},
        "cases": [
            {"gradedOutcome": "fail", "health": {"before": RELEASE, "after": RELEASE}, "reasons": ["x"]}
        ],
    }
    settle_outcomes(data)
    assert data["cases"][0]["outcome"] == "rerun_required"
    assert data["cases"][0]["reasons"][1] == "x"  # the failure stays recorded


def test_reports_never_overwrite_each_other(tmp_path):
    data = {"mode": "smoke", "health": {"start": RELEASE, "end": RELEASE}, "cases": [], "bank": {}}
    data["totals"] = reports.totals([])
    first = reports.write(dict(data), tmp_path)
    second = reports.write(dict(data), tmp_path)
    assert first["json"] != second["json"]
    assert all(path.exists() for path in [*first.values(), *second.values()])
    stem = "20990101T000000Z-smoke"
    (tmp_path / f"{stem}.txt").write_text("an earlier run", encoding="utf-8")
    assert reports._reserve(tmp_path, stem).name == f"{stem}-2"
    assert reports._reserve(tmp_path, stem).name == f"{stem}-3"
    assert (tmp_path / f"{stem}.txt").read_text(encoding="utf-8") == "an earlier run"


def test_exit_codes():
    assert reports.exit_code({"totals": {"pass": 3, "fail": 0, "error": 0, "rerun_required": 0}}) == 0
    assert reports.exit_code({"totals": {"pass": 3, "fail": 1, "error": 0, "rerun_required": 1}}) == 1
    assert reports.exit_code({"totals": {"pass": 3, "fail": 0, "error": 1, "rerun_required": 0}}) == 1
    assert reports.exit_code({"totals": {"pass": 3, "fail": 0, "error": 0, "rerun_required": 1}}) == 3
    # A case the path cannot play (blockApi over MCP) is reported, not failed.
    assert reports.exit_code({"totals": {"pass": 3, "fail": 0, "error": 0, "not_applicable": 2}}) == 0


def test_cli_grade_and_list(tmp_path, capsys):
    saved = saved_report(tmp_path, [saved_entry("NO-02 en", [])])
    assert main(["grade", str(saved), "--reports", str(tmp_path / "out")]) == 0
    assert "pass 1" in capsys.readouterr().out
    assert main(["list"]) == 0
    assert f"{len(load_bank())} case(s)" in capsys.readouterr().out
    assert main(["grade", str(tmp_path / "missing.json"), "--reports", str(tmp_path / "out")]) == 2
