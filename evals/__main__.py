"""`python -m evals smoke|model|grade|list` — see evals/README.md.

Exit codes: 0 every case passed; 1 a case failed or errored; 2 the run could not start (bank, server,
browser or model configuration); 3 nothing failed but some results must be rerun (/health changed);
4 all passed, but `--record` could not store the run in the project's database.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from harness import HarnessError

from . import report as reports
from .bank import BankError, load_bank, select
from .browser import BrowserError
from .mcp_accounts import AccountError
from .mcp_client import McpSetupError
from .model import DEFAULT_MAX_STEPS, ModelConfig, ModelError
from .runner import VIAS, RunOptions, regrade, run


def _progress(line: str) -> None:
    print(line, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evals", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--cases", type=Path, help="case directory or one case file (default evals/cases)"
        )
        command.add_argument(
            "--only",
            action="append",
            default=[],
            metavar="TEXT",
            help="run cases whose name contains TEXT or that carry the tag TEXT (repeatable)",
        )
        command.add_argument(
            "--base-url",
            help="an already running site (default: the runner migrates, seeds and serves a temporary one)",
        )
        command.add_argument("--reports", type=Path, help="report directory (default evals/reports)")
        command.add_argument("--headful", action="store_true", help="show the browser window")
        command.add_argument(
            "--via",
            choices=VIAS,
            default="webmcp",
            help="webmcp: each case's page in Chromium (default); mcp: the site's /mcp with the MCP SDK "
            "client, no browser (blockApi cases are not applicable there)",
        )
        command.add_argument(
            "--record",
            action="store_true",
            help="also store the run in the project's database (manage.py import_eval_report, with this "
            "shell's DATABASE_URL and settings) for /admin/agent-readiness/",
        )

    smoke = sub.add_parser("smoke", help="no model: execute each case's expected calls on the live page")
    common(smoke)
    model = sub.add_parser(
        "model",
        help="an OpenAI-compatible model (EVALS_BASE_URL, EVALS_MODEL, EVALS_API_KEY) drives the page",
    )
    common(model)
    model.add_argument(
        "--max-steps", type=int, default=DEFAULT_MAX_STEPS, help="model turns per case (default 8)"
    )
    grade = sub.add_parser("grade", help="grade a saved report's traces again, without a browser")
    grade.add_argument("report", type=Path, help="a report JSON from evals/reports/")
    grade.add_argument("--cases", type=Path, help="grade against the bank's current expectations instead")
    grade.add_argument("--reports", type=Path, help="report directory (default evals/reports)")
    listing = sub.add_parser("list", help="validate the bank and list its cases")
    listing.add_argument("--cases", type=Path)
    listing.add_argument("--only", action="append", default=[], metavar="TEXT")
    return parser


def main(argv: list[str] | None = None) -> int:
    # The caller's environment, taken before anything runs: `--record` stores the run in the database
    # it names (DATABASE_URL, DJANGO_SETTINGS_MODULE), not in the runner's temporary site.
    caller_env = dict(os.environ)
    args = build_parser().parse_args(argv)
    try:
        if args.command == "list":
            cases = select(load_bank(args.cases), args.only)
            for case in cases:
                history = [f"[{call['functionName']}]" for call in case.history()]
                calls = history + ([call["functionName"] for call in case.smoke_calls()] or ["(no call)"])
                tags = " ".join(case.meta.tags)
                print(f"{case.name:<58} {case.meta.route:<34} {tags:<22} {' > '.join(calls)}")
            print(f"{len(cases)} case(s)")
            return 0
        if args.command == "grade":
            report, paths = regrade(args.report, args.cases, args.reports)
        else:
            options = RunOptions(
                mode=args.command,
                cases=args.cases,
                only=args.only,
                base_url=args.base_url,
                reports_dir=args.reports,
                headless=not args.headful,
                progress=_progress,
                via=args.via,
            )
            if args.command == "model":
                options.model = ModelConfig.from_env()
                options.max_steps = args.max_steps
            report, paths = run(options)
    except (
        BankError,
        ModelError,
        HarnessError,
        BrowserError,
        McpSetupError,
        AccountError,
        FileNotFoundError,
    ) as error:
        print(f"evals: {error}", file=sys.stderr)
        return 2
    if args.command == "grade":
        for position, entry in enumerate(report["cases"], 1):
            _progress(
                f"[{position:>2}/{len(report['cases'])}] {entry['outcome'].upper():<14} {entry['name']}"
            )
    counts = report["totals"]
    print(f"\n{counts['total']} case(s) via {report.get('via') or 'webmcp'}: {reports.summary(counts)}")
    rate = reports.pass_rate(counts)
    if rate is not None:
        print(f"pass rate via {report.get('via') or 'webmcp'}: {rate:.0%} of graded cases")
    if (report.get("tokens") or {}).get("cases"):
        spent = report["tokens"]
        print(
            f"tokens: {spent['prompt']} prompt + {spent['completion']} completion over "
            f"{spent['cases']} case(s); largest prompt {spent['largestPrompt']}"
        )
    print("report: " + "  ".join(str(path) for path in paths.values()))
    if getattr(args, "record", False):
        try:
            imported = reports.record(paths["json"], caller_env)
        except (reports.RecordError, OSError, subprocess.TimeoutExpired) as error:
            print(f"evals: --record: {error}", file=sys.stderr)
            return reports.exit_code(report) or 4
        print(f"recorded: {imported}")
    return reports.exit_code(report)


if __name__ == "__main__":
    sys.exit(main())
