"""The bench's in-process payment and question tasks keep their self-checks on a tiny run, so a change to
the sweep, the bank import or the registration write that breaks them fails here rather than in a long
`make bench` (bench/payment_runs.py, `bench.tasks question_queries`). Only the checks are asserted; no
time is."""

import argparse

import pytest

from bench import payment_runs, registration_form
from bench.figures import payments as payment_figures
from bench.tasks import QUESTION_COUNTS, question_queries
from events.models import WaitlistEntry
from events.services import payments
from readiness.models import EvalResult, EvalRun
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def small_batches(monkeypatch):
    """A sweep batch of 10 registrations: the tiny run's 20 are swept in two batches of one shape."""
    monkeypatch.setitem(payments.expire_payments.inside_transaction.__kwdefaults__, "limit", 10)


def test_the_payment_tasks_self_checks_hold_on_a_tiny_run(small_batches):
    result = payment_runs.run(registrations=20, events=2, bank_small=5, bank_large=12, writes=2)

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
    assert payment_figures.model_row({})[1] == "no model run recorded in the bench's database"


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


def test_the_model_row_reads_the_latest_model_run_of_each_path():
    for age, (via, outcomes) in enumerate([("mcp", ["pass", "fail"]), ("mcp", ["pass", "pass"])]):
        run = EvalRun.objects.create(
            digest=f"d{age}",
            mode="model",
            via=via,
            model="qwen",
            revision="abc",
            started_at=f"2026-12-0{age + 1}T00:00Z",
        )
        for n, outcome in enumerate(outcomes):
            EvalResult.objects.create(
                run=run, case=f"C-{n}", outcome=outcome, prompt_tokens=1000, completion_tokens=50
            )
    EvalRun.objects.create(
        digest="smoke", mode="smoke", via="webmcp", revision="abc", started_at="2026-12-03T00:00Z"
    )

    runs = payment_runs.model_runs()

    assert list(runs) == ["mcp"]  # the smoke run has no model and no tokens
    assert (
        runs["mcp"]["passed"],
        runs["mcp"]["prompt_per_passed"],
        runs["mcp"]["completion_per_passed"],
    ) == (
        2,
        1000,
        50,
    )
    assert "MCP 1,000 + 50 (2 of 2 passed" in payment_figures.model_row(runs)[1]


def test_a_registration_writes_statements_are_counted_for_each_number_of_questions(settings):
    settings.ALLOWED_HOSTS = ["testserver"]
    EventFactory()  # a catalogue that is not empty
    result = question_queries(argparse.Namespace())
    assert set(result["counts"]) == {str(n) for n in QUESTION_COUNTS}
    assert result["answers_stored"] == {str(n): n for n in QUESTION_COUNTS}
    assert result["constant"] == (len(set(result["counts"].values())) == 1)
    assert registration_form.body(3, 1)["ticket_type"] == "student"
