"""The bench's in-process payment and question tasks keep their self-checks on a tiny run, so a change to
the sweep, the bank import or the registration write that breaks them fails here rather than in a long
`make bench` (bench/payment_runs.py, `bench.tasks question_queries`). Only the checks are asserted; no
time is."""

import argparse
import json

import pytest

from bench import payment_runs, registration_form
from bench.figures import payments as payment_figures
from bench.tasks import QUESTION_COUNTS, question_queries
from events.models import WaitlistEntry
from events.services import payments
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def small_batches(monkeypatch):
    """A sweep batch of 10 registrations: the tiny run's 20 are swept in two batches of one shape."""
    monkeypatch.setitem(payments.expire_payments.inside_transaction.__kwdefaults__, "limit", 10)


def test_the_payment_tasks_self_checks_hold_on_a_tiny_run(small_batches, tmp_path):
    result = payment_runs.run(
        registrations=20, events=2, bank_small=5, bank_large=12, writes=2, model_reports=tmp_path
    )

    expiry, bank = result["expiry"], result["bank"]
    assert expiry["expired"] == expiry["offers"] == 20
    assert [batch["expired"] for batch in expiry["batches"]] == [10, 10]
    assert expiry["statements_constant"] and len(expiry["statements_per_batch"]) == 1
    assert expiry["all_expired"] and expiry["offered_in_queue_order"] and expiry["seat_counters_right"]
    assert expiry["one_activity_row_each"] and expiry["ok"]
    assert bank["all_matched"] and bank["again_unchanged"] and bank["ok"]
    assert bank["imports"]["again"]["summary"] == "12 row(s): 12 already imported."
    assert bank["imports"]["again"]["statements_per_row"] < bank["imports"]["large"]["statements_per_row"]
    assert result["write"]["ok"] and result["write"]["writes"] == 2
    assert result["model_runs"] == {}
    assert payment_figures.failures(result) == []
    assert payment_figures.model_row({})[1] == "no model run on this machine (evals/reports/)"


def test_the_model_row_reads_the_newest_model_report_of_each_path(tmp_path):
    def report(stamp: str, via: str, passed: int, prompt: int, completion: int) -> None:
        body = {
            "mode": "model",
            "via": via,
            "startedAt": stamp,
            "model": {"model": "qwen"},
            "health": {"start": {"revision": "abcdef1234567"}},
            "totals": {"pass": passed, "total": 4},
            "tokens": {"prompt": prompt, "completion": completion, "cases": 4},
        }
        suffix = "" if via == "webmcp" else f"-{via}"  # as evals/report.py names a report
        (tmp_path / f"{stamp}-model{suffix}.json").write_text(json.dumps(body), encoding="utf-8")

    report("20261201T000000Z", "mcp", 1, 999, 9)
    report("20261206T000000Z", "mcp", 2, 3000, 40)
    report("20261206T010000Z", "webmcp", 0, 500, 5)
    (tmp_path / "20261207T000000Z-smoke.json").write_text("{}", encoding="utf-8")  # not a model run
    runs = payment_runs.model_runs(tmp_path)
    assert runs["mcp"]["prompt_per_passed"] == 1500 and runs["mcp"]["completion_per_passed"] == 20
    assert runs["webmcp"]["prompt_per_passed"] is None  # nothing passed: no per-pass figure
    row = payment_figures.model_row(runs)[1]
    assert "MCP 1,500 + 20 (2 of 4 passed; qwen, abcdef1234)" in row and "WebMCP no tokens" in row


def test_the_sweeps_check_sees_a_seat_offered_out_of_queue_order(small_batches, monkeypatch):
    """The queue-order check can fail: offers made to the last people waiting instead of the first."""
    real = payment_runs.sweep

    def sweep_then_reorder(**kwargs):
        performed = real(**kwargs)
        first = WaitlistEntry.objects.filter(status="offered").order_by("joined_at", "id").first()
        if first is not None:  # the first person's offer goes to the last person waiting instead
            last = (
                WaitlistEntry.objects.filter(event=first.event, status="waiting")
                .order_by("-joined_at")
                .first()
            )
            WaitlistEntry.objects.filter(pk=first.pk).update(
                status="waiting", offered_at=None, expires_at=None
            )
            WaitlistEntry.objects.filter(pk=last.pk).update(
                status="offered", offered_at=first.offered_at, expires_at=first.expires_at
            )
        return performed

    monkeypatch.setattr(payment_runs, "sweep", sweep_then_reorder)
    expiry = payment_runs.run(registrations=20, events=2, bank_small=1, bank_large=1, writes=1)["expiry"]
    assert not expiry["offered_in_queue_order"] and not expiry["ok"]


def test_a_registration_writes_statements_are_counted_for_each_number_of_questions(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    EventFactory()  # a catalogue that is not empty
    result = question_queries(argparse.Namespace())
    assert set(result["counts"]) == {str(n) for n in QUESTION_COUNTS}
    assert result["answers_stored"] == {str(n): n for n in QUESTION_COUNTS}
    assert result["constant"] == (len(set(result["counts"].values())) == 1)
    assert registration_form.body(3, 1)["ticket_type"] == "student"
