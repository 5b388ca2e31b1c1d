"""Run the bank against the site (smoke or model mode) or grade a saved report again.

Per case: fresh browser context on the case's route, setup (an event's seeded seats back, sign-up, calls
made before, a seat freed for the case's account and the page reloaded, the earlier turns' calls of a
multi-turn conversation replayed in order on the same page, blocked API), then the last turn:
either the case's expected calls (smoke) or the model's (model), then the grade. `/health` is read
before and after every case and at both ends of the run; a result whose revision or tool catalogue
fingerprint changed meanwhile is `rerun_required` (its graded outcome stays in the report).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.chromium import CHROMIUM_ARGS, launch
from harness.revision import fetch_health, health_stamp, working_tree_dirty

from . import report as reports
from .bank import BankError, Case, bank_digest, load_bank, select
from .browser import CasePage
from .grading import calls_from_trace, grade, history_from_trace
from .model import DEFAULT_MAX_STEPS, ChatClient, ModelConfig, ModelError, run_agent
from .seats import SiteSeats
from .server import SeededServer

STAMP_KEYS = ("revision", "toolCatalogueFingerprint")


class SetupError(RuntimeError):
    """The page could not be put in the state the case starts from."""


@dataclass
class RunOptions:
    mode: str  # "smoke" | "model"
    cases: Path | None = None
    only: list[str] = field(default_factory=list)
    base_url: str | None = None
    reports_dir: Path | None = None
    headless: bool = True
    max_steps: int = DEFAULT_MAX_STEPS
    model: ModelConfig | None = None
    progress: Callable[[str], None] = print


def same_release(before: dict, after: dict) -> bool:
    return all(before.get(key) == after.get(key) for key in STAMP_KEYS)


def final_outcome(graded: str, before: dict, after: dict, run_start: dict, run_end: dict) -> str:
    if not same_release(before, after) or not same_release(run_start, run_end):
        return "rerun_required"
    return graded


def prepare(browser, base_url: str, case: Case, seats: SiteSeats | None = None) -> CasePage:
    """The case's page in the state its setup says. `seats` reaches the site's database for the seat
    steps (`resetSeats`, `freeSeat`: evals/seats.py); cases without them never use it."""
    setup = case.meta.setup
    if (setup.get("resetSeats") or setup.get("freeSeat")) and seats is None:
        raise SetupError("this case changes an event's seats, which needs the site's database")
    page = CasePage(browser, base_url, case.meta.route, case.meta.locale)
    try:
        if setup.get("resetSeats"):
            page.setup_log["resetSeats"] = seats.reset(setup["resetSeats"])
        username = page.sign_up() if setup.get("signedIn") else None
        page.open()
        for call in setup.get("before", []):
            record = page.call(call["functionName"], call.get("arguments") or {})
            page.setup_log.setdefault("before", []).append(record.as_dict())
            result = record.result
            if record.error or not (isinstance(result, dict) and result.get("ok") is True):
                raise SetupError(
                    f"setup call {call['functionName']} did not succeed: {record.error or result}"
                )
        if setup.get("freeSeat"):
            # Someone else cancels elsewhere; the person's page shows the held seat once reloaded.
            page.setup_log["freeSeat"] = seats.free(setup["freeSeat"], username)
            page.open()
            page.setup_log["toolsAfterFreeSeat"] = page.wait_for_tools()
        replay_history(page, case)
        block = setup.get("blockApi")
        if block:
            page.block(block["url"], block.get("times"))
    except Exception:
        page.close()
        raise
    return page


def replay_history(page: CasePage, case: Case) -> list[dict]:
    """The conversation's earlier turns happen on this page, in order, before its last turn: each
    functioncall of `messages` is made as the agent made it (no reload in between). What each answered
    is kept in `page.history` and graded (`history-differs`), never raised: a site that answers
    differently fails the case rather than breaking the run."""
    for step in case.history():
        record = page.call(step["functionName"], step["arguments"]).as_dict()
        record["turn"] = step["turn"]
        page.history.append(record)
    return page.history


def run_smoke_case(page: CasePage, case: Case, trace: dict) -> dict:
    trace.update(messages=case.messages, calls=[])
    for call in case.smoke_calls():
        record = page.call(call["functionName"], call["arguments"])
        trace["calls"].append(record.as_dict())
    return trace


def run_case(
    browser,
    base_url: str,
    case: Case,
    options: RunOptions,
    client: ChatClient | None,
    seats: SiteSeats | None = None,
) -> dict:
    started = time.monotonic()
    before = health_stamp(fetch_health(base_url))
    entry: dict = {
        "name": case.name,
        "category": case.meta.category,
        "tags": list(case.meta.tags),
        "seed": case.meta.seed,
        "case": case.as_dict(),
        "trace": {},
        "grading": None,
        "error": None,
    }
    page = None
    trace: dict = {}
    try:
        page = prepare(browser, base_url, case, seats)
        if page.history:
            trace["history"] = page.history
        if options.mode == "smoke":
            run_smoke_case(page, case, trace)
        else:
            assert client is not None
            run_agent(client, page, case.messages, options.max_steps, trace)
        trace["setup"] = page.setup_log
        entry["trace"] = trace
        graded = grade(case, calls_from_trace(trace), history_from_trace(trace))
        entry["grading"] = graded.as_dict()
        entry["gradedOutcome"] = graded.outcome
        entry["reasons"] = graded.reasons
    except Exception as error:  # a case that cannot run is recorded as an error
        entry["error"] = f"{type(error).__name__}: {error}"
        entry["gradedOutcome"] = "error"
        entry["reasons"] = [entry["error"].splitlines()[0]]
        entry["trace"] = trace  # what happened before the error stays in the report
        if page is not None:
            trace["setup"] = page.setup_log
    finally:
        if page is not None:
            with contextlib.suppress(Exception):
                page.close()
    entry["health"] = {"before": before, "after": health_stamp(fetch_health(base_url))}
    entry["durationMs"] = round((time.monotonic() - started) * 1000)
    return entry


def progress_line(position: int, total: int, entry: dict) -> str:
    seconds = entry["durationMs"] / 1000
    line = f"[{position:>2}/{total}] {entry['outcome'].upper():<14} {entry['name']}  ({seconds:.1f}s)"
    if entry["outcome"] != "pass" and entry.get("reasons"):
        line += f"  — {entry['reasons'][0]}"
    return line


def settle_outcomes(report: dict) -> None:
    """Apply the /health rule to every case and count the totals."""
    start, end = report["health"]["start"], report["health"]["end"]
    for entry in report["cases"]:
        health = entry.get("health") or {}
        entry["outcome"] = final_outcome(
            entry.get("gradedOutcome", "error"), health.get("before", {}), health.get("after", {}), start, end
        )
        if entry["outcome"] == "rerun_required":
            note = (
                "/health revision or tool catalogue changed during the run; graded " + entry["gradedOutcome"]
            )
            entry["reasons"] = [note, *[r for r in entry.get("reasons", []) if r != note]]
    report["totals"] = reports.totals(report["cases"])


def run(options: RunOptions) -> tuple[dict, dict[str, Path]]:
    cases = select(load_bank(options.cases), options.only)
    if not cases:
        raise BankError(f"no case matches {options.only}")
    client = ChatClient(options.model) if options.mode == "model" and options.model else None
    if options.mode == "model" and client is None:
        raise ModelError("model mode needs a model configuration")
    report: dict = {
        "kind": "agentready-evals-report",
        "formatVersion": 1,
        "mode": options.mode,
        "startedAt": reports.utc_now(),
        "bank": {"location": str(options.cases or "evals/cases"), "digest": bank_digest(options.cases)},
        "selection": options.only,
        "cases": [],
    }
    if options.mode == "model":
        report["model"] = options.model.public()
        report["maxSteps"] = options.max_steps
    with contextlib.ExitStack() as stack:
        base_url = options.base_url
        # The seat steps reach the site's database: our own server's, or (--base-url) whatever the
        # runner's environment names (DJANGO_SETTINGS_MODULE, DATABASE_URL).
        seats = SiteSeats()
        if not base_url:
            options.progress("Preparing a seeded server (temporary SQLite, demo data)…")
            server = stack.enter_context(SeededServer())
            base_url = server.base_url
            seats = SiteSeats(server.env())
            report["serverStartedByRunner"] = True
            report["workingTreeDirty"] = working_tree_dirty()
        report["baseUrl"] = base_url
        start_health = fetch_health(base_url)
        report["health"] = {"start": health_stamp(start_health)}
        options.progress(
            f"{len(cases)} case(s), mode {options.mode}, site {base_url}, revision "
            f"{start_health.get('revision')}, catalogue {start_health.get('toolCatalogueFingerprint')}"
        )
        browser = stack.enter_context(launch(headless=options.headless))
        report["browser"] = {"chromium": browser.version, "flags": CHROMIUM_ARGS}
        for position, case in enumerate(cases, 1):
            entry = run_case(browser, base_url, case, options, client, seats)
            report["cases"].append(entry)
            # Provisional outcome for the progress line; the run-level check comes at the end.
            entry["outcome"] = final_outcome(
                entry["gradedOutcome"], entry["health"]["before"], entry["health"]["after"], {}, {}
            )
            options.progress(progress_line(position, len(cases), entry))
        report["health"]["end"] = health_stamp(fetch_health(base_url))
    report["finishedAt"] = reports.utc_now()
    settle_outcomes(report)
    paths = reports.write(report, options.reports_dir)
    return report, paths


def regrade(
    report_path: Path, cases: Path | None = None, reports_dir: Path | None = None
) -> tuple[dict, dict]:
    """Grade a saved report's traces again (current grader; the bank's current expectations when
    `cases` is given, else the expectations saved in the report). No browser, no server."""
    original = json.loads(Path(report_path).read_text(encoding="utf-8"))
    bank = {case.name: case for case in load_bank(cases)} if cases else {}
    report = {
        key: original.get(key)
        for key in (
            "kind",
            "formatVersion",
            "baseUrl",
            "serverStartedByRunner",
            "workingTreeDirty",
            "model",
            "browser",
        )
    }
    report.update(
        mode="grade",
        originalMode=original.get("mode"),
        gradedFrom=str(report_path),
        startedAt=reports.utc_now(),
        health=original.get("health") or {"start": {}, "end": {}},
        bank={
            "location": str(cases) if cases else "saved in the report",
            "digest": bank_digest(cases) if cases else (original.get("bank") or {}).get("digest"),
        },
        maxSteps=original.get("maxSteps"),
        cases=[],
    )
    for saved in original.get("cases", []):
        entry = {
            key: saved.get(key)
            for key in ("name", "category", "tags", "seed", "trace", "health", "durationMs")
        }
        case = bank.get(saved["name"]) or Case.from_dict(saved["case"])
        entry["case"] = case.as_dict()
        if saved.get("error"):
            entry.update(error=saved["error"], grading=None, gradedOutcome="error", reasons=[saved["error"]])
        else:
            try:
                trace = saved.get("trace") or {}
                graded = grade(case, calls_from_trace(trace), history_from_trace(trace))
            except Exception as error:  # an ungradable case is an error; the others still count
                message = f"cannot grade: {type(error).__name__}: {error}"
                entry.update(error=message, grading=None, gradedOutcome="error", reasons=[message])
            else:
                entry.update(
                    error=None, grading=graded.as_dict(), gradedOutcome=graded.outcome, reasons=graded.reasons
                )
        entry["previousOutcome"] = saved.get("outcome")
        report["cases"].append(entry)
    report["health"].setdefault("end", report["health"].get("start", {}))
    report["finishedAt"] = reports.utc_now()
    settle_outcomes(report)
    paths = reports.write(report, reports_dir)
    return report, paths
