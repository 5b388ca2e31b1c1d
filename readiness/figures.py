"""Sections 2 and 3: eval pass rates per revision and category, a real model's runs beside the smoke
runs, usage by mode over time, and MCP calls by connected agent.

Each figure is one aggregate query (the page makes seven in all, whatever the data size). Usage reads
the day counts (`ActivityCount`, kept with the rows by events/activity.py), not the rows, so its cost
follows the days and clients shown, not the calls made.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db.models import Count, Q, Sum
from django.utils import timezone

from core.errors import DomainError
from core.visitors import Mode
from events import errors as domain_errors
from events.models import ActivityCount

from .models import EvalResult

REVISIONS_SHOWN = 10
DAYS = 30
#: Connected agents listed, most calls first: anyone may register a client, so they are not bounded.
CLIENTS_SHOWN = 20


@dataclass
class RevisionRates:
    revision: str
    last_run: Any
    current: bool  # the revision this server runs
    changed_during_run: bool  # some run saw the site change: shown apart, never mixed in
    categories: dict[str, tuple[int, int]] = field(default_factory=dict)  # category -> (passed, graded)

    def rate(self, category: str) -> float | None:
        passed, graded = self.categories.get(category, (0, 0))
        return passed / graded if graded else None

    @property
    def overall(self) -> float | None:
        passed = sum(p for p, _ in self.categories.values())
        graded = sum(g for _, g in self.categories.values())
        return passed / graded if graded else None


#: A real model's run: model mode with a model other than the stub's scripted policies ("stub-…",
#: evals/stub_model.py), which are as scripted as a smoke run.
STUB_PREFIX = "stub-"
REAL_MODEL = Q(run__mode="model") & ~Q(run__model__startswith=STUB_PREFIX)


#: The results that count: graded (`rerun_required` and `not_applicable` are not), of a run during
#: which the site did not change (its results carry `revision_changed` and count for no revision).
GRADED = Q(run__revision_changed=False) & ~Q(outcome__in=("rerun_required", "not_applicable"))


def _real_model(row: dict[str, Any]) -> bool:
    """`REAL_MODEL` for a row of `graded_counts`."""
    return row["run__mode"] == "model" and not row["run__model"].startswith(STUB_PREFIX)


def graded_counts() -> list[dict[str, Any]]:
    """The graded results counted per run, category and outcome: what `eval_rates` and `model_runs`
    both read; one query, so that the dashboard stays within its six statements (bench row
    dashboard_queries); `GRADED` says which count.
    """
    rows = (
        EvalResult.objects.filter(GRADED)
        .values(
            "run_id",
            "run__revision",
            "run__via",
            "run__mode",
            "run__model",
            "run__started_at",
            "run__finished_at",
            "category",
            "outcome",
        )
        .annotate(count=Count("id"))
        .order_by()
    )
    return [dict(row) for row in rows]


def eval_rates(current_revision: str, counts: list[dict[str, Any]]) -> tuple[list[RevisionRates], list[str]]:
    """Pass rates by category for the current revision and the nine before it, newest first, from
    `graded_counts`: the scripted runs only (smoke, stub), so that a rate says whether the tools work.
    A real model's runs are shown apart, beside them (`model_runs`): mixed in, a revision's 100 %
    smoke and 43 % model read as 81 %."""
    by_revision: dict[str, RevisionRates] = {}
    for row in counts:
        if _real_model(row):
            continue
        started = row["run__started_at"]
        rates = by_revision.setdefault(
            row["run__revision"],
            RevisionRates(row["run__revision"], started, row["run__revision"] == current_revision, False),
        )
        rates.last_run = max(rates.last_run, started)
        passed, graded = rates.categories.get(row["category"], (0, 0))
        passed += row["count"] if row["outcome"] == "pass" else 0
        rates.categories[row["category"]] = (passed, graded + row["count"])
    revisions = sorted(by_revision.values(), key=lambda r: (not r.current, -r.last_run.timestamp()))
    shown = revisions[:REVISIONS_SHOWN]
    categories = sorted({category for r in shown for category in r.categories})
    return shown, categories


def regressions(current_revision: str, previous_revision: str | None) -> list[dict[str, str]]:
    """Cases that passed on the previous revision and do not pass on the current one, in the scripted
    runs (a real model's failures are its own, in `model_runs`); one query."""
    if not previous_revision:
        return []
    rows = (
        EvalResult.objects.filter(GRADED, run__revision__in=[current_revision, previous_revision])
        .exclude(REAL_MODEL)
        .values("run__revision", "case", "category", "outcome", "reason", "run__via")
    )
    outcomes: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    details: dict[tuple[str, str], dict[str, str]] = {}
    for row in rows:
        key = (row["case"], row["run__via"])
        outcomes[key][row["run__revision"]].add(row["outcome"])
        if row["run__revision"] == current_revision and row["outcome"] != "pass":
            details[key] = {
                "case": row["case"],
                "via": row["run__via"],
                "category": row["category"],
                "outcome": row["outcome"],
                "reason": row["reason"],
            }
    return sorted(
        (
            details[key]
            for key, seen in outcomes.items()
            if seen.get(previous_revision) == {"pass"} and key in details
        ),
        key=lambda d: (d["category"], d["case"]),
    )


@dataclass
class PathRates:
    """One path (webmcp or mcp) of one revision: the model's runs and the smoke runs, summed."""

    via: str
    models: set[str] = field(default_factory=set)
    model: list[int] = field(default_factory=lambda: [0, 0])  # passed, graded
    smoke: list[int] = field(default_factory=lambda: [0, 0])
    model_seconds: float = 0.0  # the model runs' durations, summed
    model_runs: set[int] = field(default_factory=set)
    failing: list[dict[str, Any]] = field(default_factory=list)  # {"id", "case", "outcome", "reason", …}

    @staticmethod
    def _rate(counts: list[int]) -> float | None:
        return counts[0] / counts[1] if counts[1] else None

    @property
    def model_rate(self) -> float | None:
        return self._rate(self.model)

    @property
    def smoke_rate(self) -> float | None:
        return self._rate(self.smoke)

    @property
    def seconds_per_case(self) -> float | None:
        return self.model_seconds / self.model[1] if self.model[1] else None


@dataclass
class ModelRevision:
    revision: str
    current: bool
    last_run: Any
    paths: dict[str, PathRates] = field(default_factory=dict)


def model_runs(current_revision: str, counts: list[dict[str, Any]]) -> list[ModelRevision]:
    """Per revision with a model run (newest first, at most REVISIONS_SHOWN): over each path the real
    model's pass rate beside the smoke run's, the model's name, how long its runs took, and its failing
    cases (each with its result's id, for the trace page). Reads `graded_counts`, and one query for the
    failing cases.

    Several runs of one revision and path (a bank run in parts) are summed.
    """
    revisions: dict[str, ModelRevision] = {}
    smoke: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for row in counts:
        if row["run__mode"] != "smoke" and not _real_model(row):
            continue
        key = (row["run__revision"], row["run__via"])
        passed = row["count"] if row["outcome"] == "pass" else 0
        if row["run__mode"] == "smoke":
            smoke[key][0] += passed
            smoke[key][1] += row["count"]
            continue
        found = revisions.setdefault(
            row["run__revision"],
            ModelRevision(
                row["run__revision"], row["run__revision"] == current_revision, row["run__started_at"]
            ),
        )
        found.last_run = max(found.last_run, row["run__started_at"])
        path = found.paths.setdefault(row["run__via"], PathRates(row["run__via"]))
        path.models.add(row["run__model"] or "?")
        path.model[0] += passed
        path.model[1] += row["count"]
        if row["run_id"] not in path.model_runs and row["run__finished_at"]:
            path.model_runs.add(row["run_id"])
            path.model_seconds += (row["run__finished_at"] - row["run__started_at"]).total_seconds()
    shown = sorted(revisions.values(), key=lambda r: (not r.current, -r.last_run.timestamp()))
    shown = shown[:REVISIONS_SHOWN]
    for found in shown:
        for via, path in found.paths.items():
            path.smoke = smoke.get((found.revision, via), [0, 0])
        found.paths = dict(sorted(found.paths.items(), key=lambda item: (item[0] != "webmcp", item[0])))
    failing = (
        EvalResult.objects.filter(
            GRADED,
            REAL_MODEL,
            run__revision__in=[found.revision for found in shown],
            outcome__in=("fail", "error"),
        )
        .values(
            "id",
            "case",
            "outcome",
            "reason",
            "prompt_tokens",
            "completion_tokens",
            "run__revision",
            "run__via",
        )
        .order_by("case", "id")
    )
    by_revision = {found.revision: found for found in shown}
    for failed in failing:
        listed = by_revision[failed["run__revision"]].paths.get(failed["run__via"])
        if listed is not None:
            listed.failing.append(dict(failed))
    return shown


@dataclass
class Usage:
    days: list[date]
    by_mode: dict[str, list[int]]  # mode -> calls per day, aligned with `days`
    refusals: list[dict[str, Any]]  # {"tool", "reason", "count"}, most first


def refusal_reasons() -> list[str]:
    """Every reason a use case refuses with (the Activity outcome of a refused call)."""
    found: set[str] = set()
    assert issubclass(domain_errors.EventFull, DomainError)  # the domain's refusals are loaded
    stack: list[type[DomainError]] = [DomainError]
    while stack:
        cls = stack.pop()
        found.add(cls.reason)
        stack.extend(cls.__subclasses__())
    return sorted(found)


def _first_day(today: date | None) -> date:
    """The window's first day: DAYS days up to today, the site's (TIME_ZONE) days the counts are kept in."""
    today = today or timezone.localdate(timezone=timezone.get_default_timezone())
    return today - timedelta(days=DAYS - 1)


def usage(*, today: date | None = None) -> Usage:
    """Calls per day by mode over the last DAYS days, and refusals by tool and reason; two queries.

    Days are the site's (TIME_ZONE), the days the counts are kept in.
    """
    first = _first_day(today)
    recent = ActivityCount.objects.filter(day__gte=first)
    per_day = recent.values("day", "mode").annotate(n=Sum("calls")).order_by()
    days = [first + timedelta(days=i) for i in range(DAYS)]
    index = {day: i for i, day in enumerate(days)}
    # The callers' channels: the site's own work (`system`) is not a call anyone made.
    by_mode = {mode: [0] * DAYS for mode in Mode.values if mode != Mode.SYSTEM}
    for row in per_day:
        if row["day"] in index and row["mode"] in by_mode:
            by_mode[row["mode"]][index[row["day"]]] += row["n"]
    refused = (
        recent.filter(outcome__in=refusal_reasons())
        .values("action", "outcome")
        .annotate(n=Sum("calls"))
        .order_by("-n", "action", "outcome")[:12]
    )
    return Usage(
        days=days,
        by_mode=by_mode,
        refusals=[{"tool": r["action"], "reason": r["outcome"], "count": r["n"]} for r in refused],
    )


@dataclass(frozen=True)
class ClientCalls:
    client: str  # the connected agent's label; "": none (a personal access token, or nobody signed in)
    calls: int
    refusals: int


def calls_by_client(*, today: date | None = None) -> list[ClientCalls]:
    """MCP calls over the last DAYS days by the connected agent that held the caller's OAuth token,
    with how many were refused; the CLIENTS_SHOWN with the most calls, one query."""
    rows = (
        ActivityCount.objects.filter(day__gte=_first_day(today), mode=Mode.MCP)
        .values("client")
        .annotate(
            n=Sum("calls"),
            refused=Sum("calls", filter=Q(outcome__in=refusal_reasons()), default=0),
        )
        .order_by("-n", "client")[:CLIENTS_SHOWN]
    )
    return [ClientCalls(row["client"], row["n"], row["refused"]) for row in rows]
