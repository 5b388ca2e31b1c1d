"""Reports: one JSON (everything, re-gradable), one text table and one HTML page per run.

Files are `evals/reports/<UTC timestamp>-<mode>.{json,txt,html}` (`<mode>-mcp` for a run via MCP); an
existing name is never reused, so earlier results (failures included) stay on disk next to later ones.
`record()` stores a written report in the project's database (`--record`), for the readiness dashboard.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from harness.revision import PROJECT_DIR

REPORTS_DIR = Path(__file__).resolve().parent / "reports"
OUTCOMES = ("pass", "fail", "error", "rerun_required", "not_applicable")
CALLS_HEADING = "calls ([…] earlier turns, * runner confirms)"


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def totals(cases: list[dict]) -> dict:
    counts = {outcome: 0 for outcome in OUTCOMES}
    for case in cases:
        counts[case["outcome"]] = counts.get(case["outcome"], 0) + 1
    counts["total"] = len(cases)
    return counts


def exit_code(report: dict) -> int:
    """0 all passed; 1 a case failed or errored; 3 nothing failed but results must be rerun.
    `not_applicable` (a case the path cannot play, e.g. blockApi over MCP) is not a failure."""
    counts = report["totals"]
    if counts.get("fail") or counts.get("error"):
        return 1
    if counts.get("rerun_required"):
        return 3
    return 0


def pass_rate(counts: dict) -> float | None:
    """Passed among graded cases (`not_applicable` and `rerun_required` are not graded)."""
    graded = sum(counts.get(outcome, 0) for outcome in ("pass", "fail", "error"))
    return counts.get("pass", 0) / graded if graded else None


def case_tokens(case: dict) -> dict | None:
    """A model-mode case's tokens (`trace.tokens`: prompt and completion over its requests), or None."""
    tokens = (case.get("trace") or {}).get("tokens")
    return tokens if isinstance(tokens, dict) and tokens.get("requests") else None


def run_tokens(cases: list[dict]) -> dict:
    """Tokens of a model-mode run: sums over its cases, and the largest single prompt."""
    counted = [tokens for case in cases if (tokens := case_tokens(case))]
    return {
        "prompt": sum(t.get("prompt", 0) for t in counted),
        "completion": sum(t.get("completion", 0) for t in counted),
        "largestPrompt": max((t.get("largestPrompt", 0) for t in counted), default=0),
        "cases": len(counted),
    }


def summary(counts: dict) -> str:
    """`pass 3, fail 0, error 0, rerun_required 0` (and `not_applicable N` when some were)."""
    text = ", ".join(f"{outcome} {counts.get(outcome, 0)}" for outcome in OUTCOMES[:4])
    if counts.get("not_applicable"):
        text += f", not_applicable {counts['not_applicable']}"
    return text


def _reserve(directory: Path, stem: str) -> Path:
    """A stem no earlier report uses (`-2`, `-3`… appended when needed), claimed by creating its JSON."""
    directory.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 1000):
        candidate = stem if attempt == 1 else f"{stem}-{attempt}"
        if any((directory / f"{candidate}{suffix}").exists() for suffix in (".txt", ".html")):
            continue
        try:
            with open(directory / f"{candidate}.json", "x", encoding="utf-8"):
                return directory / candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"no free report name for {stem} in {directory}")


def write(report: dict, directory: Path | None = None) -> dict[str, Path]:
    directory = directory or REPORTS_DIR
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    suffix = "-mcp" if report.get("via") == "mcp" else ""
    base = _reserve(directory, f"{stamp}-{report['mode']}{suffix}")
    paths = {kind: base.with_name(base.name + f".{kind}") for kind in ("json", "txt", "html")}
    report["files"] = {kind: str(path) for kind, path in paths.items()}
    paths["json"].write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    paths["txt"].write_text(text_report(report), encoding="utf-8")
    paths["html"].write_text(html_report(report), encoding="utf-8")
    return paths


class RecordError(RuntimeError):
    """`manage.py import_eval_report` did not store the report; the message has its output."""


def record(json_path: Path, env: Mapping[str, str], *, python: str | None = None) -> str:
    """Store the report at `json_path` in the project's database: `manage.py import_eval_report` in a
    subprocess with `env`, the CALLER's environment (its DATABASE_URL and settings) — never the
    environment of the temporary server the runner starts. Returns what the command printed."""
    done = subprocess.run(
        [python or sys.executable, "manage.py", "import_eval_report", str(Path(json_path).resolve())],
        cwd=PROJECT_DIR,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        output = "\n".join(part.strip() for part in (done.stdout, done.stderr) if part.strip())
        raise RecordError(f"manage.py import_eval_report failed ({done.returncode}):\n{output[-3000:]}")
    return done.stdout.strip()


def _calls_summary(case: dict) -> str:
    """The last turn's calls; the earlier turns' replayed calls first, in brackets."""
    trace = case.get("trace") or {}
    history = [f"[{call['functionName']}]" for call in trace.get("history", [])]
    calls = [
        call["functionName"] + ("*" if call.get("confirmedByRunner") else "")
        for call in trace.get("calls", [])
    ]
    return " > ".join([*history, *(calls or ["(no call)"])])


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def site_name() -> str:
    """SITE_NAME: the configured settings' (DJANGO_SETTINGS_MODULE), else the project's own module's."""
    try:
        return settings.SITE_NAME
    except ImproperlyConfigured:  # a runner with no DJANGO_SETTINGS_MODULE in its environment
        from config import settings as project_settings

        return project_settings.SITE_NAME


def header_lines(report: dict) -> list[str]:
    health = report.get("health", {})
    start, end = health.get("start", {}), health.get("end", {})
    via = report.get("via") or "webmcp"
    lines = [
        f"{site_name()} — eval run ({report['mode']}, via={via})",
        f"started   {report.get('startedAt')}   finished {report.get('finishedAt')}",
        f"site      {report.get('baseUrl')}"
        + ("   (server started by the runner)" if report.get("serverStartedByRunner") else ""),
        f"revision  {start.get('revision')}"
        + ("   WORKING TREE DIRTY: uncommitted changes ran" if report.get("workingTreeDirty") else ""),
        f"catalogue {start.get('toolCatalogueFingerprint')}",
    ]
    if start != end:
        lines.append(
            f"/health CHANGED during the run: end revision {end.get('revision')}, "
            f"catalogue {end.get('toolCatalogueFingerprint')}"
        )
    if report.get("mcp"):
        mcp = report["mcp"]
        lines.append(
            f"mcp       {mcp.get('url')}   protocol {mcp.get('mode')}, SDK mcp {mcp.get('sdk')}, "
            f"elicitation {mcp.get('elicitation')}; uiUpdated not graded"
        )
    if report.get("browser"):
        lines.append(f"browser   Chromium {report['browser'].get('chromium')} (--enable-features=WebMCP)")
    if report.get("model"):
        model = report["model"]
        lines.append(
            f"model     {model.get('model')} at {model.get('baseUrl')}   max steps {report.get('maxSteps')}"
        )
    if report.get("gradedFrom"):
        lines.append(f"regraded  {report['gradedFrom']} ({report.get('originalMode')})")
    lines.append(f"bank      {report.get('bank', {}).get('digest')}")
    return lines


def text_report(report: dict) -> str:
    cases = report["cases"]
    name_width = min(max([len(case["name"]) for case in cases] + [4]), 60)
    lines = [*header_lines(report), ""]
    lines.append(f"{'#':>3}  {'outcome':<14}  {'case':<{name_width}}  {CALLS_HEADING:<44}  why")
    lines.append("-" * (3 + 2 + 14 + 2 + name_width + 2 + 44 + 2 + 30))
    for position, case in enumerate(cases, 1):
        why = "; ".join(case.get("reasons") or []) or "-"
        tokens = case_tokens(case)
        if tokens:
            why = f"[tokens {tokens['prompt']}+{tokens['completion']}] {why}"
        lines.append(
            f"{position:>3}  {case['outcome']:<14}  {_clip(case['name'], name_width):<{name_width}}  "
            f"{_clip(_calls_summary(case), 44):<44}  {why}"
        )
    counts = report["totals"]
    lines += [
        "",
        f"total {counts['total']}: {summary(counts)}",
    ]
    rate = pass_rate(counts)
    if rate is not None:
        lines.append(f"pass rate {rate:.0%} of graded cases")
    if report.get("tokens", {}).get("cases"):
        spent = report["tokens"]
        lines.append(
            f"tokens {spent['prompt']} prompt + {spent['completion']} completion; "
            f"largest prompt {spent['largestPrompt']}"
        )
    return "\n".join(lines) + "\n"


def html_report(report: dict) -> str:
    escape = html.escape
    rows = []
    for position, case in enumerate(report["cases"], 1):
        why = "; ".join(case.get("reasons") or []) or "-"
        trace = json.dumps(
            {"case": case.get("case"), "trace": case.get("trace"), "grading": case.get("grading")},
            ensure_ascii=False,
            indent=2,
        )
        rows.append(
            f"<tr id='case-{position}' class='{escape(case['outcome'])}'><td>{position}</td>"
            f"<td>{escape(case['outcome'])}</td>"
            f"<td>{escape(case['name'])}</td><td>{escape(_calls_summary(case))}</td><td>{escape(why)}</td></tr>"
            f"<tr><td></td><td colspan='4'><details><summary>trace</summary><pre>{escape(trace)}</pre>"
            "</details></td></tr>"
        )
    header = "<br>".join(escape(line) for line in header_lines(report))
    title = f"{report['mode']} via {report.get('via') or 'webmcp'}"
    counts = report["totals"]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Eval run {escape(title)}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 2rem; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ border-bottom: 1px solid #ddd; padding: .3rem .5rem; text-align: left; vertical-align: top; }}
tr.pass td:nth-child(2) {{ color: #176b2c; }}
tr.fail td:nth-child(2), tr.error td:nth-child(2) {{ color: #a31515; }}
tr.rerun_required td:nth-child(2) {{ color: #8a5a00; }}
tr.not_applicable td:nth-child(2) {{ color: #666; }}
pre {{ white-space: pre-wrap; font-size: 12px; background: #f6f6f6; padding: .5rem; }}
</style></head><body>
<h1>Eval run — {escape(title)}</h1><p>{header}</p>
<p>total {counts["total"]}: {escape(summary(counts))}</p>
<table><thead><tr><th>#</th><th>outcome</th><th>case</th>
<th>calls ([…] = earlier turns, * = confirmed by the runner)</th><th>why</th></tr></thead><tbody>
{"".join(rows)}
</tbody></table></body></html>
"""
