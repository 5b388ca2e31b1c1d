"""Reading an eval report (evals/report.py's JSON) into the database, once per report."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from .models import OUTCOMES, EvalResult, EvalRun


class NotAReport(ValueError):
    """The file is not an eval report this version understands."""


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def _model(data: dict[str, Any]) -> str:
    model = data.get("model")
    return str(model.get("model") or "") if isinstance(model, dict) else ""


def _route(case: dict[str, Any]) -> str:
    meta = (case.get("case") or {}).get("meta") if isinstance(case.get("case"), dict) else None
    return str(meta.get("route") or "") if isinstance(meta, dict) else ""


def _tokens(case: dict[str, Any], key: str) -> int | None:
    tokens = (case.get("trace") or {}).get("tokens") if isinstance(case.get("trace"), dict) else None
    if not isinstance(tokens, dict) or not tokens.get("requests"):
        return None
    value = tokens.get(key)
    return value if isinstance(value, int) and value >= 0 else None


def _trace(case: dict[str, Any]) -> dict[str, Any]:
    """What the trace page shows: the case's trace, grading and reasons, as the report has them."""
    return {key: case.get(key) for key in ("trace", "grading", "reasons", "error") if case.get(key)}


@transaction.atomic
def import_report(raw: bytes, *, source: str = "") -> tuple[EvalRun, bool]:
    """The run of report `raw` (created, or found when imported before) and whether it is new."""
    try:
        data: dict[str, Any] = json.loads(raw)
    except ValueError as error:
        raise NotAReport(f"not JSON: {error}") from error
    if data.get("kind") != "agentready-evals-report" or data.get("formatVersion") != 1:
        raise NotAReport("not an agentready-evals-report of format 1")
    digest = hashlib.sha256(raw).hexdigest()
    existing = EvalRun.objects.filter(digest=digest).first()
    if existing is not None:
        return existing, False
    health = data.get("health") or {}
    start, end = health.get("start") or {}, health.get("end") or {}
    changed = bool(end) and (
        start.get("revision") != end.get("revision")
        or start.get("toolCatalogueFingerprint") != end.get("toolCatalogueFingerprint")
    )
    run = EvalRun.objects.create(
        digest=digest,
        source=source[:300],
        mode=str(data.get("mode", ""))[:20],
        via=str(data.get("via") or "webmcp")[:10],
        model=str(_model(data))[:100],
        revision=str(start.get("revision") or "unknown")[:64],
        fingerprint=str(start.get("toolCatalogueFingerprint") or "")[:80],
        revision_changed=changed,
        started_at=_when(data.get("startedAt")) or timezone.now(),
        finished_at=_when(data.get("finishedAt")),
        totals=data.get("totals") or {},
    )
    EvalResult.objects.bulk_create(
        [
            EvalResult(
                run=run,
                case=str(case["name"])[:200],
                category=str(case.get("category") or "?")[:20],
                route=_route(case)[:200],
                outcome=case["outcome"] if case.get("outcome") in OUTCOMES else "error",
                reason="; ".join(str(r) for r in case.get("reasons") or [] if r)
                or str(case.get("error") or ""),
                prompt_tokens=_tokens(case, "prompt"),
                completion_tokens=_tokens(case, "completion"),
                duration_ms=case["durationMs"] if isinstance(case.get("durationMs"), int) else None,
                trace=_trace(case),
            )
            for case in data.get("cases") or []
        ]
    )
    return run, True
