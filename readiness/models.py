"""Eval runs as the dashboard reads them: one row per run and one per case, tied to a revision."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

OUTCOMES = ("pass", "fail", "error", "rerun_required", "not_applicable")


class EvalRun(models.Model):
    """One run of the eval bank (`python -m evals … --record`, or `manage.py import_eval_report`)."""

    digest = models.CharField(max_length=64, unique=True, editable=False)  # of the report: imported once
    source = models.CharField(_("report"), max_length=300, blank=True)
    mode = models.CharField(_("eval mode"), max_length=20)  # smoke | model
    via = models.CharField(_("path"), max_length=10, default="webmcp")  # webmcp | mcp
    model = models.CharField(
        _("model"), max_length=100, blank=True
    )  # model mode: its name ("stub-…" for the stub)
    revision = models.CharField(_("revision"), max_length=64, db_index=True)
    fingerprint = models.CharField(_("tool catalogue"), max_length=80, blank=True)
    #: The site's revision or catalogue changed during the run: its results must not count for either.
    revision_changed = models.BooleanField(_("revision changed during the run"), default=False)
    started_at = models.DateTimeField(_("started"))
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    totals = models.JSONField(_("totals"), default=dict)

    class Meta:
        ordering = ["-started_at", "-id"]
        verbose_name = _("eval run")
        verbose_name_plural = _("eval runs")
        indexes = [models.Index(fields=["revision", "started_at"], name="evalrun_revision_start")]

    def __str__(self) -> str:
        return f"{self.mode}/{self.via} on {self.revision[:10]} at {self.started_at:%Y-%m-%d %H:%M}"


class EvalResult(models.Model):
    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="results")
    case = models.CharField(_("case"), max_length=200)
    category = models.CharField(_("category"), max_length=20, db_index=True)
    route = models.CharField(_("route"), max_length=200, blank=True)
    outcome = models.CharField(_("outcome"), max_length=20, choices=[(o, o) for o in OUTCOMES])
    reason = models.TextField(_("reason"), blank=True)
    #: Model mode: what the case cost (the endpoint's count, summed over the case's requests).
    prompt_tokens = models.PositiveIntegerField(_("prompt tokens"), null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(_("completion tokens"), null=True, blank=True)
    duration_ms = models.PositiveIntegerField(_("duration (ms)"), null=True, blank=True)
    #: The case's trace and grading as the report has them, for the dashboard's trace page.
    trace = models.JSONField(_("trace"), default=dict, blank=True)

    class Meta:
        ordering = ["run", "id"]
        verbose_name = _("eval result")
        verbose_name_plural = _("eval results")
        constraints = [models.UniqueConstraint(fields=["run", "case"], name="evalresult_one_per_case")]

    def __str__(self) -> str:
        return f"{self.case}: {self.outcome}"
