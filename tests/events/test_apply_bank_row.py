"""A bank statement's rows applied to the payments waiting for them (`apply_bank_row`, performed by
`manage.py import_bank_statement` and the admin's upload page): matched by reference (any case,
spaces, full-width, with or without the event's code) or by the reported account digits plus the
amount; each row once (its checksum); every row ends in a state the organisers see."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.visitors import SYSTEM, Mode, Visitor
from events import actions
from events.choices import BankRowState, PaymentStatus, RegistrationStatus, StaffRole
from events.models import Activity, BankStatementRow, EventStaff, Registration
from tests.factories import UserFactory, paid_event

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SAMPLE = Path(settings.BASE_DIR) / "events" / "fixtures" / "sample-bank-statement.csv"


def apply(visitor=SYSTEM, **row):
    data = {"checksum": f"sum-{BankStatementRow.objects.count()}-{row.get('reference', '')}", **row}
    performed = actions.perform(
        actions.ACTIONS["apply_bank_row"], actions.Caller(visitor=visitor, channel=Mode.ADMIN), data
    )
    if performed.error is not None:
        raise performed.error
    return performed.result


@pytest.fixture
def pending():
    event = paid_event(capacity=5, payment_code="ORM27")
    user = UserFactory()
    actions.call("register_event", visitor=Visitor(user=user), channel=Mode.API, event_id=event.public_id)
    return Registration.objects.select_related("event").get(user=user)


def status(registration) -> tuple[str, str]:
    return tuple(
        Registration.objects.filter(pk=registration.pk).values_list("status", "payment_status").get()
    )


@pytest.mark.parametrize(
    "written",
    ["{ref}", "{ref_lower}", "  {spaced}  ", "{fullwidth}", "note: {code_only} thanks", "{ref_no_dash}"],
)
def test_a_reference_matches_however_it_was_written(pending, written):
    ref = pending.payment_reference_text
    forms = {
        "ref": ref,
        "ref_lower": ref.lower(),
        "spaced": " ".join(ref),
        "fullwidth": "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in ref),
        "code_only": pending.payment_reference,
        "ref_no_dash": ref.replace("-", ""),
    }
    result = apply(amount=600, reference=written.format(**forms))
    assert result.state == BankRowState.MATCHED and result.row.registration_id == pending.pk
    assert status(pending) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)


def test_the_reported_digits_and_the_amount_match_a_row_without_a_reference(pending):
    payer = Visitor(user=pending.user)
    actions.call(
        "report_payment",
        visitor=payer,
        channel=Mode.UI,
        event_id=pending.event.public_id,
        account_last5="24680",
        paid_on=timezone.localdate(),
    )
    assert apply(amount=599, reference="", account_last5="24680").state == BankRowState.NO_MATCH
    result = apply(amount=600, reference="轉帳", account_last5="24680")
    assert result.state == BankRowState.MATCHED
    assert status(pending) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)


@pytest.mark.parametrize(
    ("amount", "expected"),
    [(500, BankRowState.PARTIAL), (700, BankRowState.OVERPAID), (600, BankRowState.MATCHED)],
)
def test_partial_and_overpaid_are_reported_not_confirmed(pending, amount, expected):
    result = apply(amount=amount, reference=pending.payment_reference_text)
    assert result.state == expected
    paid = expected == BankRowState.MATCHED
    assert status(pending)[1] == (PaymentStatus.PAID if paid else PaymentStatus.AWAITING)


def test_each_row_is_applied_once_and_again_changes_nothing(pending):
    row = {"checksum": "same-row", "amount": 600, "reference": pending.payment_reference_text}
    first, again = apply(**row), apply(**row)
    assert (first.applied, first.state) == (True, BankRowState.MATCHED)
    assert (again.applied, again.outcome) == (False, "ALREADY_IMPORTED")
    assert BankStatementRow.objects.count() == 1
    second_row = apply(checksum="another-row", amount=600, reference=pending.payment_reference_text)
    assert second_row.state == BankRowState.ALREADY_PAID


def test_late_money_is_confirmed_while_a_seat_is_free_else_reported_for_a_refund(pending):
    Registration.objects.filter(pk=pending.pk).update(payment_due_at=timezone.now() - timedelta(minutes=1))
    actions.call("expire_payments", visitor=SYSTEM, channel=Mode.ADMIN)
    assert status(pending) == (RegistrationStatus.EXPIRED, PaymentStatus.UNPAID)
    assert apply(amount=600, reference=pending.payment_reference_text).state == BankRowState.LATE_CONFIRMED
    assert status(pending) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)

    full = paid_event(capacity=1, payment_code="FULL")
    late_user = UserFactory()
    actions.call("register_event", visitor=Visitor(user=late_user), channel=Mode.API, event_id=full.public_id)
    late = Registration.objects.get(user=late_user)
    Registration.objects.filter(pk=late.pk).update(payment_due_at=timezone.now() - timedelta(minutes=1))
    actions.call("expire_payments", visitor=SYSTEM, channel=Mode.ADMIN)
    actions.call(
        "register_event", visitor=Visitor(user=UserFactory()), channel=Mode.API, event_id=full.public_id
    )
    assert apply(amount=600, reference=late.payment_reference_text).state == BankRowState.LATE
    assert status(late) == (RegistrationStatus.EXPIRED, PaymentStatus.UNPAID)


def test_money_for_a_cancelled_registration_is_to_refund(pending):
    actions.call(
        "cancel_registration",
        visitor=Visitor(user=pending.user),
        channel=Mode.UI,
        event_id=pending.event.public_id,
    )
    assert apply(amount=600, reference=pending.payment_reference_text).state == BankRowState.CANCELLED


def test_an_invalid_row_and_a_stranger_are_kept_with_their_state(pending):
    assert apply(amount=None, reference="x", problem="bad_amount").state == BankRowState.INVALID
    assert apply(amount=-5, reference=pending.payment_reference_text, problem="negative_amount").state == (
        BankRowState.INVALID
    )
    assert apply(amount=600, reference="生日快樂").state == BankRowState.NO_MATCH
    assert status(pending) == (RegistrationStatus.PENDING_PAYMENT, PaymentStatus.AWAITING)
    assert BankStatementRow.objects.count() == 3


def test_an_events_managers_apply_its_statement_only(pending):
    manager, outsider = Visitor(user=UserFactory()), Visitor(user=UserFactory())
    EventStaff.objects.create(event=pending.event, user=manager.user, role=StaffRole.MANAGER)
    with pytest.raises(Exception) as refused:
        apply(
            outsider, amount=600, reference=pending.payment_reference_text, event_id=pending.event.public_id
        )
    assert refused.value.reason == "NOT_ORGANISER"
    with pytest.raises(Exception) as unnamed:
        apply(manager, amount=600, reference=pending.payment_reference_text)
    assert unnamed.value.reason == "NOT_ORGANISER"
    other = paid_event(capacity=5)
    EventStaff.objects.create(event=other, user=manager.user, role=StaffRole.MANAGER)
    result = apply(manager, amount=600, reference=pending.payment_reference_text, event_id=other.public_id)
    assert result.state == BankRowState.NO_MATCH  # another event's reference: not theirs to match
    result = apply(
        manager, amount=600, reference=pending.payment_reference_text, event_id=pending.event.public_id
    )
    assert result.state == BankRowState.MATCHED


def test_the_activity_rows_never_hold_the_account_digits(pending):
    apply(amount=600, reference=pending.payment_reference_text, account_last5="97531", payer="林雅婷")
    assert all("97531" not in str(row.__dict__) for row in Activity.objects.all())


# ── the command ──────────────────────────────────────────────────────────────────────────────


def test_the_command_imports_the_sample_statement_once(settings):
    from django.core.management import call_command as run

    run("seed_demo", stdout=io.StringIO())
    out = io.StringIO()
    call_command("import_bank_statement", str(SAMPLE), stdout=out)
    text = out.getvalue()
    assert "line 2: matched" in text and "line 3: partial" in text and "line 4: no_match" in text
    assert "line 5: invalid" in text and "line 6: already_paid" in text
    assert "12345" not in text and "***45" in text  # the digits are masked
    paid = Registration.objects.get(payment_reference="K7M2QX")
    assert (paid.status, paid.payment_status) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)
    short = Registration.objects.get(payment_reference="P4WZ8N")
    assert short.payment_status == PaymentStatus.AWAITING
    again = io.StringIO()
    call_command("import_bank_statement", str(SAMPLE), stdout=again)
    assert again.getvalue().count("already imported (") == 5
    assert BankStatementRow.objects.count() == 5
    rows = Activity.objects.filter(action="apply_bank_row")
    assert set(rows.values_list("client", flat=True)) == {"manage.py import_bank_statement"}
    assert rows.count() == 10


def test_the_command_refuses_a_file_it_cannot_read(tmp_path):
    bad = tmp_path / "statement.csv"
    bad.write_bytes(b"%PDF-1.4 not a statement")
    with pytest.raises(CommandError, match="not_csv"):
        call_command("import_bank_statement", str(bad), stdout=io.StringIO())
    with pytest.raises(CommandError, match="No event"):
        call_command("import_bank_statement", str(SAMPLE), "--event", "evt-nope", stdout=io.StringIO())


def test_a_row_imported_before_is_found_by_its_checksum_before_any_matching_or_lock(pending):
    row = {"checksum": "read-once", "amount": 600, "reference": pending.payment_reference_text}
    apply(**row)
    with CaptureQueriesContext(connection) as captured:
        again = actions.perform(
            actions.ACTIONS["apply_bank_row"], actions.Caller(visitor=SYSTEM, channel=Mode.ADMIN), row
        ).result
    assert (again.applied, again.outcome) == (False, "ALREADY_IMPORTED")
    statements = [
        query["sql"]
        for query in captured.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
        and "events_activity" not in query["sql"]
    ]
    assert len(statements) == 1 and "events_bankstatementrow" in statements[0]
    assert "FOR UPDATE" not in " ".join(statements) and "events_registration" not in " ".join(statements)
