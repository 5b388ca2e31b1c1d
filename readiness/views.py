"""`/admin/agent-readiness/`: what agents can do on each page, how well they do it, how usage moves.

Staff only (the admin site's own login). Eight queries whatever the data size: the session and the
user (the admin's), the graded results (eval rates and the real model's runs), regressions, the model's
failing cases, usage per day, refusals, MCP calls by connected agent (tests/readiness/test_dashboard.py).
A failing case links to its trace (`eval_trace`), as the report stored it.
"""

from __future__ import annotations

import json

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django_webmcp.registry import registry

from core.revision import revision

from . import charts, figures, matrix
from .models import EvalResult


def agent_readiness(request: HttpRequest) -> HttpResponse:
    current = revision()
    counts = figures.graded_counts()
    rates, categories = figures.eval_rates(current, counts)
    previous = next((r.revision for r in rates if not r.current), None)
    usage = figures.usage()
    current_rates = next((r for r in rates if r.current), None)
    context = {
        **admin.site.each_context(request),
        "title": _("Agent readiness"),
        "revision": current,
        "fingerprint": registry.fingerprint(),
        "page_kinds": matrix.page_kinds(),
        "rates": rates,
        "categories": categories,
        "rate_rows": [{"revision": r, "cells": [r.rate(category) for category in categories]} for r in rates],
        "current_rates": current_rates,
        "previous_revision": previous,
        "regressions": figures.regressions(current, previous) if current_rates else [],
        "model_runs": figures.model_runs(current, counts),
        "usage": usage,
        "clients": figures.calls_by_client(),
        "clients_shown": figures.CLIENTS_SHOWN,
        "usage_rows": [
            {"day": day, "counts": [usage.by_mode[mode][i] for mode in usage.by_mode]}
            for i, day in enumerate(usage.days)
        ],
        "usage_chart": charts.lines_by_day(
            usage.by_mode,
            usage.days,
            title=_("Calls per day by mode, last 30 days"),
            desc=_("One line per mode (ui, agent, api, admin, mcp); the table below gives every number."),
            ident="usage",
        ),
        "refusals_chart": charts.bars(
            [(f"{r['tool']} · {r['reason']}", r["count"]) for r in usage.refusals],
            title=_("Refusals by tool and reason, last 30 days"),
            desc=_("The refusals agents and people met most; the table below gives every number."),
            ident="refusals",
        ),
        "rates_chart": charts.bars(
            [(category, current_rates.rate(category) or 0.0) for category in categories]
            if current_rates
            else [],
            title=_("Eval pass rate by category, this revision"),
            desc=_("Share of graded cases that passed, per category, on the revision this server runs."),
            ident="rates",
            percent=True,
        ),
    }
    return render(request, "readiness/dashboard.html", context)


def eval_trace(request: HttpRequest, pk: int) -> HttpResponse:
    """One case of one eval run: its outcome, why, what it cost, and its trace and grading as recorded."""
    result = get_object_or_404(EvalResult.objects.select_related("run"), pk=pk)
    context = {
        **admin.site.each_context(request),
        "title": _("Eval trace"),
        "result": result,
        "trace": json.dumps(result.trace, ensure_ascii=False, indent=2),
    }
    return render(request, "readiness/trace.html", context)
