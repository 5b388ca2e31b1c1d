"""The bank: in the webmcp-evals format the CLI reads unchanged, covering the question bank, and strict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.bank import CASES_DIR, CATEGORIES, SIDECAR_NAME, BankError, case_files, load_bank

UPSTREAM_NODE_KEYS = {"functionName", "arguments", "result", "optional"}


def upstream_node_ok(node) -> bool:
    if isinstance(node, dict) and set(node) in ({"ordered"}, {"unordered"}):
        return all(upstream_node_ok(inner) for inner in next(iter(node.values())))
    return isinstance(node, dict) and "functionName" in node and set(node) <= UPSTREAM_NODE_KEYS


def test_case_files_are_what_the_webmcp_evals_cli_reads():
    files = case_files()
    assert files and all(path.name != SIDECAR_NAME for path in files)
    for path in files:
        cases = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(cases, list), path
        for case in cases:
            assert set(case) == {"name", "messages", "expectedCall"}, case.get("name")
            assert all(m["role"] == "user" and isinstance(m["content"], str) for m in case["messages"])
            expected = case["expectedCall"]
            assert expected is None or (isinstance(expected, list) and expected), case["name"]
            assert all(upstream_node_ok(node) for node in expected or []), case["name"]


def test_the_bank_covers_every_category_in_both_languages():
    cases = load_bank()
    assert len(cases) >= 20
    for category in CATEGORIES:
        in_category = [case for case in cases if category in case.meta.tags]
        assert in_category, category
    assert {"en", "zh-Hant"} <= {tag for case in cases for tag in case.meta.tags}
    prompts = {case.messages[0]["content"] for case in cases}
    assert "幫我找台北免費的入門活動" in prompts
    assert "高雄有付費的進階 Agent 活動嗎？" in prompts
    zh = [case for case in cases if "zh-Hant" in case.meta.tags]
    assert all(case.meta.locale == "zh-TW" for case in zh), "a Taiwanese visitor sees the zh-Hant page"


def test_no_cases_expect_no_call_and_recovery_cases_block_the_api():
    cases = load_bank()
    no_cases = [case for case in cases if "NO" in case.meta.tags]
    assert len(no_cases) >= 3 and all(case.expectedCall is None for case in no_cases)
    assert {case.meta.route for case in no_cases} >= {"/events/", "/events/evt-webmcp-intro/"}
    for case in (case for case in cases if "RECOVERY" in case.meta.tags):
        assert case.meta.setup["blockApi"]["url"].endswith("/api/events/evt-webmcp-intro")
        first = case.expectedCall[0]
        assert first["result"]["code"] == "TEMPORARY_FAILURE" and first["result"]["retryable"] is True


def test_every_case_runs_in_smoke_with_concrete_arguments():
    for case in load_bank():
        for call in case.smoke_calls():
            assert "$" not in json.dumps(call["arguments"]), case.name


# ---- the loader refuses what would be misread --------------------------------------------------------

GOOD_CASE = {
    "name": "SEL-x en: a case",
    "messages": [{"role": "user", "content": "Find events in Taipei."}],
    "expectedCall": [{"functionName": "search_events", "arguments": {"location": "taipei"}}],
}
GOOD_META = {"route": "/events/", "tags": ["SEL", "en"]}


def write_bank(directory: Path, case: dict, meta: dict | None = None, name: str | None = None) -> Path:
    (directory / "cases.json").write_text(json.dumps([case]), encoding="utf-8")
    sidecar = {"cases": {name or case.get("name", "?"): meta if meta is not None else GOOD_META}}
    (directory / SIDECAR_NAME).write_text(json.dumps(sidecar), encoding="utf-8")
    return directory


def test_a_small_bank_loads(tmp_path):
    [case] = load_bank(write_bank(tmp_path, GOOD_CASE))
    assert case.meta.route == "/events/" and case.meta.category == "SEL"
    assert case.upstream() == GOOD_CASE


BROKEN = [
    ("an extra key in a case", {**GOOD_CASE, "route": "/events/"}, GOOD_META, "exactly the keys"),
    ("[] for no call", {**GOOD_CASE, "expectedCall": []}, GOOD_META, "write null"),
    (
        "an unknown operator",
        {**GOOD_CASE, "expectedCall": [{"functionName": "s", "arguments": {"q": {"$regex": "x"}}}]},
        GOOD_META,
        "unknown operators",
    ),
    (
        "a bad pattern",
        {**GOOD_CASE, "expectedCall": [{"functionName": "s", "arguments": {"q": {"$pattern": "("}}}]},
        GOOD_META,
        "bad $pattern",
    ),
    (
        "a NO case that expects a call",
        GOOD_CASE,
        {"route": "/events/", "tags": ["NO", "en"]},
        "expects no call",
    ),
    ("no category", GOOD_CASE, {"route": "/events/", "tags": ["en"]}, "category"),
    ("no language", GOOD_CASE, {"route": "/events/", "tags": ["SEL"]}, "language"),
    ("a route that is not a path", GOOD_CASE, {**GOOD_META, "route": "events"}, "route"),
    ("an unknown sidecar key", GOOD_CASE, {**GOOD_META, "startUrl": "/"}, "unknown sidecar keys"),
    (
        "operators without smoke arguments",
        {**GOOD_CASE, "expectedCall": [{"functionName": "s", "arguments": {"q": {"$pattern": "x"}}}]},
        GOOD_META,
        "give smokeArguments",
    ),
]


@pytest.mark.parametrize(("label", "case", "meta", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_the_loader_refuses(tmp_path, label, case, meta, message):
    with pytest.raises(BankError, match=message.replace("$", r"\$")):
        load_bank(write_bank(tmp_path, case, meta))


def test_every_case_needs_a_sidecar_entry_and_every_entry_a_case(tmp_path):
    with pytest.raises(BankError, match="has no entry"):
        load_bank(write_bank(tmp_path, GOOD_CASE, name="another name"))


def test_the_shipped_bank_is_the_default():
    assert CASES_DIR.name == "cases" and (CASES_DIR / SIDECAR_NAME).exists()
