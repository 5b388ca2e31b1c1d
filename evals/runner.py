"""Run the bank against the site (smoke or model mode) or grade a saved report again.

Two paths (`via`): `webmcp` (default) plays each case in Chromium on its page; `mcp` plays it against the
site's MCP endpoint (`/mcp`) with the SDK's client, no browser (`mcp_client.py`): the same setup, calls,
model loop and grader, a token instead of a sign-up, the page's event id given explicitly; cases that
need the browser (`blockApi`) are `not_applicable` there.

Per case: fresh browser context (or MCP client) on the case's route, setup (an event's seeded seats
back, sign-up, calls made before, a seat freed for the case's account and the page reloaded, the earlier
turns' calls of a multi-turn conversation replayed in order on the same page, blocked API), then the
last turn: either the case's expected calls (smoke) or the model's (model), then the grade. `/health` is read
before and after every case and at both ends of the run; a result whose revision or tool catalogue
fingerprint changed meanwhile is `rerun_required` (its graded outcome stays in the report).
"""

from __future__ import annotations

import contextlib
import hashlib
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
from .matcher import flatten_calls
from .mcp_accounts import SiteAccounts
from .mcp_client import MCP_MODE, MCP_PATH, McpCasePage, sdk_version
from .model import DEFAULT_MAX_STEPS, ChatClient, ModelConfig, ModelError, run_agent
from .seats import SiteSeats
from .server import SeededServer

STAMP_KEYS = ("revision", "toolCatalogueFingerprint")
VIAS = ("webmcp", "mcp")
NOT_APPLICABLE = "not_applicable"


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
    via: str = "webmcp"  # "webmcp" (Chromium, the page's tools) | "mcp" (the site's /mcp, no browser)


def same_release(before: dict, after: dict) -> bool:
    return all(before.get(key) == after.get(key) for key in STAMP_KEYS)


def final_outcome(graded: str, before: dict, after: dict, run_start: dict, run_end: dict) -> str:
    if graded == NOT_APPLICABLE:  # nothing ran, nothing to rerun
        return graded
    if not same_release(before, after) or not same_release(run_start, run_end):
        return "rerun_required"
    return graded


def prepare(browser, base_url: str, case: Case, seats: SiteSeats | None = None) -> CasePage:
    """The case's page in the state its setup says. `seats` reaches the site's database for the seat
    steps (`resetSeats`, `freeSeat`: evals/seats.py); cases without them never use it."""
    setup = case.meta.setup
    if (setup.get("resetSeats") or setup.get("freeSeat") or setup.get("door")) and seats is None:
        raise SetupError("this case changes an event's seats, which needs the site's database")
    return prepare_page(CasePage(browser, base_url, case.meta.route, case.meta.locale), case, seats)


def prepare_page(page, case: Case, seats: SiteSeats | None = None):
    """The setup of `case` on `page` (a `CasePage`, or over MCP a `McpCasePage`, whose steps are the
    same: `open` lists the tools, `sign_up` names the account its token is for). Closes it on failure."""
    setup = case.meta.setup
    if (setup.get("resetSeats") or setup.get("freeSeat") or setup.get("door")) and seats is None:
        page.close()
        raise SetupError("this case changes an event's seats, which needs the site's database")
    try:
        if setup.get("resetSeats"):
            page.setup_log["resetSeats"] = seats.reset(setup["resetSeats"])
        username = page.sign_up() if setup.get("signedIn") else None
        if setup.get("door"):  # the case's account at the event's door, before its page is opened
            page.setup_log["door"] = seats.door(setup["door"], username)
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


def case_tools(case: Case) -> list[str]:
    """Every tool a case's run calls: its `before` calls, its earlier turns and its expected calls."""
    names = [call["functionName"] for call in case.meta.setup.get("before", [])]
    names += [step["functionName"] for step in case.history()]
    names += [node["functionName"] for node in flatten_calls(case.expectedCall)]
    return list(dict.fromkeys(names))


def mcp_not_applicable(case: Case, tool_names: set[str]) -> str | None:
    """Why a case cannot be played over MCP, or None. `blockApi` aborts the browser's requests to the
    site's API, which the page's tools make; over MCP the tools run on the server and there is no
    browser request to abort. A case calling a tool `/mcp` does not list cannot be played either."""
    if case.meta.setup.get("blockApi"):
        return "not applicable over MCP: blockApi aborts the browser's API requests; no browser here"
    if case.meta.answerOnPage:
        return "not applicable over MCP: the answer is in the page's text, and an MCP client has no page"
    missing = [name for name in case_tools(case) if name not in tool_names]
    if missing:
        return f"not applicable over MCP: /mcp does not list {', '.join(missing)}"
    return None


def mcp_account_reason(case: Case, read_only: set[str]) -> str | None:
    """Why a case needs the person's account over MCP (a token), or None to play it anonymously.

    `signedIn` cases need one. So does a case that writes (calls a tool that is not read-only) as an
    anonymous visitor of the page could (the browser keeps an anonymous visitor's saves in its
    session; over MCP every write needs a token) — unless the case expects the anonymous refusal
    (`AUTH_REQUIRED`), which is what it checks."""
    if case.meta.setup.get("signedIn"):
        return "signedIn"
    nodes = flatten_calls(case.expectedCall)
    if any((node.get("result") or {}).get("code") == "AUTH_REQUIRED" for node in nodes):
        return None
    writes = [name for name in case_tools(case) if name not in read_only]
    if writes:
        return f"the case writes ({', '.join(writes)}); over MCP writes need the person's account"
    return None


def run_smoke_case(page: CasePage, case: Case, trace: dict) -> dict:
    trace.update(messages=case.messages, calls=[])
    for call in case.smoke_calls():
        record = page.call(call["functionName"], call["arguments"])
        trace["calls"].append(record.as_dict())
    return trace


@dataclass
class McpPlan:
    """How a case is played over MCP, decided before the run: skipped (and why), or with an account."""

    not_applicable: str | None = None
    account: dict | None = None
    account_reason: str = ""


def run_case(
    browser,
    base_url: str,
    case: Case,
    options: RunOptions,
    client: ChatClient | None,
    seats: SiteSeats | None = None,
    plan: McpPlan | None = None,
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
    if options.via == "mcp" and plan is not None and plan.not_applicable:
        entry.update(gradedOutcome=NOT_APPLICABLE, reasons=[plan.not_applicable], notApplicable=True)
        entry["health"] = {"before": before, "after": health_stamp(fetch_health(base_url))}
        entry["durationMs"] = round((time.monotonic() - started) * 1000)
        return entry
    page = None
    trace: dict = {}
    try:
        if options.via == "mcp":
            plan = plan or McpPlan()
            page = McpCasePage(base_url, case.meta.route, case.meta.locale, plan.account, plan.account_reason)
            prepare_page(page, case, seats)  # on failure its setup log stays in the trace
        else:
            page = prepare(browser, base_url, case, seats)
        if page.history:
            trace["history"] = page.history
        if options.mode == "smoke":
            run_smoke_case(page, case, trace)
        else:
            assert client is not None
            if options.via == "mcp":
                page.route_binding = False  # the model gives the event id itself
            run_agent(client, page, case.messages, options.max_steps, trace)
        trace["setup"] = page.setup_log
        entry["trace"] = trace
        graded = grade(
            case,
            calls_from_trace(trace),
            history_from_trace(trace),
            via=options.via,
            answer=trace.get("finalAnswer"),
        )
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
    line = f"[{position:>2}/{total}] {entry['outcome'].upper():<14} {entry['name']}  ({seconds:.1f}s"
    tokens = (entry.get("trace") or {}).get("tokens")
    if tokens and tokens.get("requests"):
        line += f", tokens {tokens['prompt']} prompt + {tokens['completion']} completion"
    line += ")"
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


def plan_mcp(base_url: str, cases: list[Case], accounts: SiteAccounts, report: dict) -> list[McpPlan]:
    """Before the run: `/mcp`'s tools (listed once, anonymously), which cases are not applicable, and
    a fresh account with a token for each case that needs one (all made in one subprocess)."""
    probe = McpCasePage(base_url, "/")
    try:
        tools = probe.tools()
    finally:
        probe.close()
    names = {tool["name"] for tool in tools}
    read_only = {tool["name"] for tool in tools if (tool.get("annotations") or {}).get("readOnlyHint")}
    listing = json.dumps(tools, sort_keys=True, ensure_ascii=False).encode("utf-8")
    report["mcp"] = {
        "url": base_url.rstrip("/") + MCP_PATH,
        "mode": MCP_MODE,
        "sdk": sdk_version(),
        "elicitation": "accepted by the runner",
        "tools": sorted(names),
        "toolsListDigest": "sha256:" + hashlib.sha256(listing).hexdigest(),
    }
    plans = []
    for case in cases:
        skipped = mcp_not_applicable(case, names)
        reason = None if skipped else mcp_account_reason(case, read_only)
        plans.append(McpPlan(not_applicable=skipped, account_reason=reason or ""))
    made = iter(accounts.create(sum(1 for plan in plans if plan.account_reason)))
    for plan in plans:
        if plan.account_reason:
            plan.account = next(made)
    return plans


def run(options: RunOptions) -> tuple[dict, dict[str, Path]]:
    if options.via not in VIAS:
        raise BankError(f"via is one of {VIAS}, not {options.via!r}")
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
        "via": options.via,
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
        site_env = None
        if not base_url:
            options.progress("Preparing a seeded server (temporary SQLite, demo data)…")
            server = stack.enter_context(SeededServer())
            base_url = server.base_url
            site_env = server.env()
            report["serverStartedByRunner"] = True
            report["workingTreeDirty"] = working_tree_dirty()
        seats = stack.enter_context(SiteSeats(site_env))
        accounts = SiteAccounts(site_env)
        report["baseUrl"] = base_url
        start_health = fetch_health(base_url)
        report["health"] = {"start": health_stamp(start_health)}
        options.progress(
            f"{len(cases)} case(s), mode {options.mode}, via {options.via}, site {base_url}, revision "
            f"{start_health.get('revision')}, catalogue {start_health.get('toolCatalogueFingerprint')}"
        )
        browser = None
        plans: list[McpPlan | None] = [None] * len(cases)
        if options.via == "mcp":
            plans = list(plan_mcp(base_url, cases, accounts, report))
        else:
            browser = stack.enter_context(launch(headless=options.headless))
            report["browser"] = {"chromium": browser.version, "flags": CHROMIUM_ARGS}
        for position, (case, plan) in enumerate(zip(cases, plans, strict=True), 1):
            entry = run_case(browser, base_url, case, options, client, seats, plan)
            report["cases"].append(entry)
            # Provisional outcome for the progress line; the run-level check comes at the end.
            entry["outcome"] = final_outcome(
                entry["gradedOutcome"], entry["health"]["before"], entry["health"]["after"], {}, {}
            )
            options.progress(progress_line(position, len(cases), entry))
        report["health"]["end"] = health_stamp(fetch_health(base_url))
    report["finishedAt"] = reports.utc_now()
    settle_outcomes(report)
    if options.mode == "model":
        report["tokens"] = reports.run_tokens(report["cases"])
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
            "mcp",
        )
    }
    via = original.get("via") or "webmcp"
    report["via"] = via
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
        if saved.get("notApplicable"):
            entry.update(
                error=None, grading=None, gradedOutcome=NOT_APPLICABLE, reasons=saved.get("reasons") or []
            )
            entry["notApplicable"] = True
        elif saved.get("error"):
            entry.update(error=saved["error"], grading=None, gradedOutcome="error", reasons=[saved["error"]])
        else:
            try:
                trace = saved.get("trace") or {}
                graded = grade(
                    case,
                    calls_from_trace(trace),
                    history_from_trace(trace),
                    via=via,
                    answer=trace.get("finalAnswer"),
                )
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
