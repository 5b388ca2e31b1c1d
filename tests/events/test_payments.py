"""Paid registrations, the rules once on the use cases: the payment's state machine as a table, its
deadline on a fixed clock, the reference, who may confirm and refund, the sweep, and the person's
report of their transfer."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.errors import DomainError
from core.visitors import SYSTEM, Mode, Visitor
from events import actions
from events.choices import (
    HOLDING_SEAT,
    NotificationKind,
    PaidVia,
    PaymentStatus,
    RegistrationStatus,
    StaffRole,
    WaitlistStatus,
)
from events.models import Activity, Event, EventStaff, Notification, Registration, WaitlistEntry
from events.services import payments
from tests.factories import EventFactory, UserFactory, paid_event
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def call(name: str, visitor: Visitor, **data):
    return actions.call(name, visitor=visitor, channel=Mode.API, **data)


def refusal(name: str, visitor: Visitor, **data) -> str:
    with pytest.raises(DomainError) as raised:
        call(name, visitor, **data)
    return raised.value.reason


@pytest.fixture
def manager(db) -> Visitor:
    return Visitor(user=UserFactory(username="manager", is_staff=True, is_superuser=True))


def person(name: str = "payer") -> Visitor:
    return Visitor(user=UserFactory(username=f"{name}-{UserFactory._meta.model.objects.count()}"))


def register(visitor: Visitor, event: Event, **data) -> Registration:
    return call("register_event", visitor, event_id=event.public_id, **data).registration


def fresh(registration: Registration) -> Registration:
    return Registration.objects.select_related("event").get(pk=registration.pk)


def state(registration: Registration) -> tuple[str, str]:
    registration = fresh(registration)
    return registration.status, registration.payment_status


def overdue(registration: Registration) -> None:
    Registration.objects.filter(pk=registration.pk).update(
        payment_due_at=timezone.now() - timedelta(minutes=1)
    )


def sweep() -> None:
    actions.perform(
        actions.ACTIONS["expire_payments"], actions.Caller(visitor=SYSTEM, channel=Mode.ADMIN), {}
    )


# ── the state machine, as a table ─────────────────────────────────────────────────────────────


def _confirm(event, reg, manager):
    call("confirm_payment", manager, event_id=event.public_id, attendee_id=reg.pk)


def _expire(event, reg, manager):
    overdue(reg)
    sweep()


def _cancel(event, reg, manager):
    call("cancel_registration", Visitor(user=reg.user), event_id=event.public_id)


def _paid_then_cancelled_then_refunded(event, reg, manager):
    _confirm(event, reg, manager)
    _cancel(event, reg, manager)
    call("refund_payment", manager, event_id=event.public_id, attendee_id=reg.pk)


def _expired_then_late_money_with_a_free_seat(event, reg, manager):
    _expire(event, reg, manager)
    _confirm(event, reg, manager)


def _report(event, reg, manager):
    call(
        "report_payment",
        Visitor(user=reg.user),
        event_id=event.public_id,
        account_last5="54321",
        paid_on=timezone.localdate(),
    )


def _report_then_confirm(event, reg, manager):
    _report(event, reg, manager)
    _confirm(event, reg, manager)


#: Transitions from a registration waiting for its transfer: (steps, its status and payment after).
TABLE = {
    "pending → confirmed (paid)": (_confirm, (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)),
    "pending → reported (being checked)": (
        _report,
        (RegistrationStatus.PENDING_PAYMENT, PaymentStatus.CHECKING),
    ),
    "reported → confirmed": (_report_then_confirm, (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)),
    "pending → expired": (_expire, (RegistrationStatus.EXPIRED, PaymentStatus.UNPAID)),
    "pending → cancelled": (_cancel, (RegistrationStatus.CANCELLED, PaymentStatus.UNPAID)),
    "paid → cancelled → refunded": (
        _paid_then_cancelled_then_refunded,
        (RegistrationStatus.CANCELLED, PaymentStatus.REFUNDED),
    ),
    "expired → late money, a seat free → confirmed again": (
        _expired_then_late_money_with_a_free_seat,
        (RegistrationStatus.CONFIRMED, PaymentStatus.PAID),
    ),
}


@pytest.mark.parametrize("case", TABLE)
def test_the_payment_state_machine(case, manager):
    steps, expected = TABLE[case]
    event = paid_event(capacity=5)
    registration = register(person(), event)
    assert state(registration) == (RegistrationStatus.PENDING_PAYMENT, PaymentStatus.AWAITING)
    steps(event, registration, manager)
    assert state(registration) == expected
    after = fresh(registration)
    if after.status == RegistrationStatus.CONFIRMED:  # a ticket with the confirmation, never before
        assert after.ticket_code
    elif after.payment_status in (PaymentStatus.AWAITING, PaymentStatus.CHECKING, PaymentStatus.UNPAID):
        assert after.ticket_code is None
    holding = Registration.objects.filter(event=event, status__in=HOLDING_SEAT).count()
    assert Event.objects.get(pk=event.pk).seats_taken == holding


def test_late_money_without_a_free_seat_is_refused_for_a_refund(manager):
    event = paid_event(capacity=1)
    late = register(person("late"), event)
    _expire(event, late, manager)
    register(person("next"), event)  # the freed seat is taken
    assert (
        refusal("confirm_payment", manager, event_id=event.public_id, attendee_id=late.pk)
        == "PAYMENT_EXPIRED"
    )
    assert state(late) == (RegistrationStatus.EXPIRED, PaymentStatus.UNPAID)


def test_confirming_a_paid_one_changes_nothing_and_a_cancelled_one_is_refused(manager):
    event = paid_event(capacity=5)
    registration = register(person(), event)
    _confirm(event, registration, manager)
    again = call("confirm_payment", manager, event_id=event.public_id, attendee_id=registration.pk)
    assert again.changed is False and again.outcome == "UNCHANGED"
    other = register(person("other"), event)
    _cancel(event, other, manager)
    assert (
        refusal("confirm_payment", manager, event_id=event.public_id, attendee_id=other.pk)
        == "PAYMENT_NOT_PENDING"
    )


def test_a_confirmed_payment_sends_the_ticket_email_with_its_qr_code(manager, settings):
    settings.SITE_URL = "https://events.example"
    event = paid_event(capacity=5, title="Paid workshop")
    registration = register(person(), event)
    run_tasks()
    [due] = mail.outbox
    assert "Paid workshop" in due.subject
    assert registration.payment_reference_text in due.body
    assert "/events/" in due.body and "/payment/" in due.body
    mail.outbox.clear()
    _confirm(event, registration, manager)
    run_tasks()
    [ticket] = mail.outbox
    assert Notification.objects.filter(kind=NotificationKind.PAYMENT_CONFIRMED).count() == 1
    assert fresh(registration).ticket_code in ticket.body
    assert any(part.get_content_type() == "image/png" for part in ticket.message().walk())


def test_the_people_who_may_confirm_and_refund_are_the_events_managers():
    event = paid_event(capacity=5)
    registration = register(person(), event)
    payer = Visitor(user=registration.user)
    outsider = person("outsider")
    door = person("door")
    EventStaff.objects.create(event=event, user=door.user, role=StaffRole.DOOR)
    for who in (payer, outsider, door):  # nobody confirms their own payment; door staff do not either
        assert refusal("confirm_payment", who, event_id=event.public_id, attendee_id=registration.pk) in (
            "NOT_ORGANISER",
            "NOT_EVENT_STAFF",
        )
    boss = person("boss")
    EventStaff.objects.create(event=event, user=boss.user, role=StaffRole.MANAGER)
    call("confirm_payment", boss, event_id=event.public_id, attendee_id=registration.pk)
    assert state(registration) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)


def test_a_refund_is_recorded_once_with_who_when_and_how_much(manager):
    event = paid_event(capacity=5)
    registration = register(person(), event)
    assert refusal("refund_payment", manager, event_id=event.public_id, attendee_id=registration.pk) == (
        "PAYMENT_NOT_REFUNDABLE"  # nothing paid
    )
    _confirm(event, registration, manager)
    assert refusal("refund_payment", manager, event_id=event.public_id, attendee_id=registration.pk) == (
        "PAYMENT_NOT_REFUNDABLE"  # it still holds its seat
    )
    _cancel(event, registration, manager)
    assert refusal(
        "refund_payment", manager, event_id=event.public_id, attendee_id=registration.pk, amount=601
    ) == ("REFUND_AMOUNT_INVALID")
    call("refund_payment", manager, event_id=event.public_id, attendee_id=registration.pk, amount=500)
    after = fresh(registration)
    assert (after.refunded_amount, after.refunded_by, after.paid_amount) == (500, manager.user, 600)
    assert after.refunded_at is not None and after.payment_status == PaymentStatus.REFUNDED
    assert refusal("refund_payment", manager, event_id=event.public_id, attendee_id=registration.pk) == (
        "PAYMENT_NOT_REFUNDABLE"
    )


def test_an_event_cancelled_leaves_paid_ones_to_refund_and_owed_ones_unpaid(manager):
    event = paid_event(capacity=5)
    paid, owed = register(person("paid"), event), register(person("owed"), event)
    _confirm(event, paid, manager)
    call("cancel_event", manager, event_id=event.public_id)
    assert state(paid) == (RegistrationStatus.CANCELLED, PaymentStatus.PAID)
    assert fresh(paid).refund_due
    assert state(owed) == (RegistrationStatus.CANCELLED, PaymentStatus.UNPAID)
    call("refund_payment", manager, event_id=event.public_id, attendee_id=paid.pk)
    assert state(paid) == (RegistrationStatus.CANCELLED, PaymentStatus.REFUNDED)


# ── registering for a paid type ────────────────────────────────────────────────────────────────


def test_a_paid_registration_holds_the_seat_with_its_reference_and_deadline():
    event = paid_event(capacity=2, prices={"early": 600, "regular": 1200}, payment_code="WEBMCP")
    registration = register(person(), event, ticket_type="early")
    assert (registration.ticket_type, registration.amount) == ("early", 600)
    assert registration.ticket_code is None
    assert re.fullmatch(r"WEBMCP-[A-HJ-NP-Z2-9]{6}", registration.payment_reference_text)
    assert not set(registration.payment_reference) & set("01OI")
    assert Event.objects.get(pk=event.pk).seats_taken == 1


def test_references_are_short_spread_and_without_look_alikes():
    references = [payments.new_reference() for _ in range(2000)]
    # 2,000 draws from 32⁶ = 2³⁰ share a value with a chance of about 0.2 % (it happened once in CI):
    # a reference is unique by the database's constraint, not by luck. More than a handful of repeats
    # would mean a narrow source; five or more happen about once in 10¹⁶ runs.
    assert len(set(references)) > len(references) - 5
    assert all(re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", reference) for reference in references)


def test_free_types_behave_as_before():
    event = paid_event(capacity=5, prices={"student": 0, "regular": 800})
    registration = register(person(), event, ticket_type="student")
    assert state(registration) == (RegistrationStatus.CONFIRMED, PaymentStatus.NONE)
    assert registration.ticket_code and registration.amount == 0


def test_several_types_need_one_named_from_those_on_sale():
    now = timezone.now()
    event = paid_event(capacity=5, prices={"early": 600, "regular": 1200})
    event.ticket_types.filter(identifier="early").update(sales_end=now - timedelta(hours=1))
    from events.models import refresh_ticket_form

    refresh_ticket_form(event.pk)
    visitor = person()
    with pytest.raises(DomainError) as missing:
        call("register_event", visitor, event_id=event.public_id)
    assert missing.value.reason == "TICKET_TYPE_REQUIRED" and missing.value.extra["ticketTypes"] == [
        "regular"
    ]
    assert (
        refusal("register_event", visitor, event_id=event.public_id, ticket_type="vip")
        == "TICKET_TYPE_UNKNOWN"
    )
    assert refusal("register_event", visitor, event_id=event.public_id, ticket_type="early") == (
        "TICKET_TYPE_NOT_ON_SALE"
    )
    assert not Registration.objects.exists()


def test_a_types_own_cap_is_counted_on_the_one_seat_pool():
    event = paid_event(capacity=3, prices={"student": 600, "regular": 1200})
    event.ticket_types.filter(identifier="student").update(cap=1)
    from events.models import refresh_ticket_form

    refresh_ticket_form(event.pk)
    event.refresh_from_db()
    register(person("s1"), event, ticket_type="student")
    assert refusal("register_event", person("s2"), event_id=event.public_id, ticket_type="student") == (
        "TICKET_TYPE_SOLD_OUT"
    )
    register(person("r1"), event, ticket_type="regular")
    register(person("r2"), event, ticket_type="regular")
    assert (
        refusal("register_event", person("r3"), event_id=event.public_id, ticket_type="regular")
        == "EVENT_FULL"
    )


def test_paying_at_the_door_confirms_at_once_and_the_check_in_records_it(manager):
    event = paid_event(capacity=5, at_door=True)
    registration = register(person(), event, payment_method="at_door")
    assert state(registration) == (RegistrationStatus.CONFIRMED, PaymentStatus.AT_DOOR)
    assert registration.ticket_code and registration.payment_reference is None
    found = call("find_attendee", manager, event_id=event.public_id)
    assert [a.due_at_door for a in found.attendees] == [600]
    checked = call("check_in_attendee", manager, event_id=event.public_id, attendee_id=registration.pk)
    assert checked.paid_at_door == 600
    after = fresh(registration)
    assert (after.payment_status, after.paid_via, after.paid_amount) == (
        PaymentStatus.PAID,
        PaidVia.DOOR,
        600,
    )


def test_the_door_is_offered_only_where_the_event_says_so():
    event = paid_event(capacity=5)
    assert refusal("register_event", person(), event_id=event.public_id, payment_method="at_door") == (
        "PAYMENT_METHOD_UNAVAILABLE"
    )


def test_people_still_waiting_for_their_transfer_may_pay_at_the_door_where_allowed(manager):
    event = paid_event(capacity=5, pending_may_pay_at_door=True)
    registration = register(person(), event)
    found = call("find_attendee", manager, event_id=event.public_id)
    assert [(a.attendee_id, a.due_at_door) for a in found.attendees] == [(registration.pk, 600)]
    call("check_in_attendee", manager, event_id=event.public_id, attendee_id=registration.pk)
    assert state(registration) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)
    closed = paid_event(capacity=5)
    other = register(person("other"), closed)
    assert call("find_attendee", manager, event_id=closed.public_id).attendees == []
    assert refusal("check_in_attendee", manager, event_id=closed.public_id, attendee_id=other.pk) == (
        "TICKET_CANCELLED"
    )


def test_the_dummy_method_confirms_without_a_gateway_where_it_is_on(settings):
    event = paid_event(capacity=5)
    with pytest.raises(DomainError):
        payments.payment_start(
            event, payments.TicketTypeSpec("x", {}, 600), "dummy", now=timezone.now(), approval=False
        )
    settings.PAYMENT_METHODS = ["bank_transfer", "dummy"]
    registration = call("register_event", person(), event_id=event.public_id).registration
    assert registration.status == RegistrationStatus.PENDING_PAYMENT  # a transfer stays the default
    from events.services.registrations import register_event

    paid = register_event(visitor=person("d"), event_id=event.public_id, payment_method="dummy").registration
    assert (paid.status, paid.payment_status, paid.paid_via) == (
        RegistrationStatus.CONFIRMED,
        PaymentStatus.PAID,
        PaidVia.PROCESSOR,
    )


def test_an_approval_event_starts_the_payment_when_approved(manager):
    event = paid_event(capacity=5, requires_approval=True)
    registration = register(person(), event)
    assert state(registration) == (RegistrationStatus.PENDING_APPROVAL, PaymentStatus.AWAITING)
    assert fresh(registration).payment_due_at is None
    call("approve_registration", manager, registration_id=registration.pk)
    after = fresh(registration)
    assert after.status == RegistrationStatus.PENDING_PAYMENT and after.payment_due_at is not None
    assert after.ticket_code is None


# ── deadlines, on a fixed clock ────────────────────────────────────────────────────────────────


def test_the_deadline_is_72_hours_and_never_after_the_last_payment_time():
    start = timezone.now().replace(microsecond=0)
    with time_machine.travel(start, tick=False):
        far = paid_event(capacity=5, starts_at=start + timedelta(days=30))
        near = paid_event(capacity=5, starts_at=start + timedelta(days=2))
        set_by_organiser = paid_event(
            capacity=5, starts_at=start + timedelta(days=30), payment_closes_at=start + timedelta(hours=10)
        )
        assert register(person(), far).payment_due_at == start + timedelta(hours=72)
        assert register(person(), near).payment_due_at == start + timedelta(days=1)
        assert register(person(), set_by_organiser).payment_due_at == start + timedelta(hours=10)


def test_no_transfer_is_taken_after_the_last_payment_time_but_the_door_still_is():
    start = timezone.now().replace(microsecond=0)
    with time_machine.travel(start, tick=False):
        event = paid_event(capacity=5, starts_at=start + timedelta(hours=12), at_door=True)
        assert refusal("register_event", person(), event_id=event.public_id) == "PAYMENT_CLOSED"
        door = register(person(), event, payment_method="at_door")
        assert door.status == RegistrationStatus.CONFIRMED


def test_a_reminder_goes_out_before_the_deadline_and_the_sweep_expires_after_it(settings):
    settings.PAYMENT_REMINDER_HOURS = 24
    start = timezone.now().replace(microsecond=0)
    with time_machine.travel(start, tick=False):
        event = paid_event(capacity=1)
        registration = register(person(), event)
        waiting = person("waiting")
        WaitlistEntry.objects.create(event=event, user=waiting.user, joined_at=start)
        run_tasks()
    from events.sweeps import sweep as run_sweep

    with time_machine.travel(start + timedelta(hours=47), tick=False):
        run_sweep()
        assert not Notification.objects.filter(kind=NotificationKind.PAYMENT_REMINDER).exists()
    with time_machine.travel(start + timedelta(hours=49), tick=False):
        run_sweep()
        run_sweep()  # once
        run_tasks()
        assert Notification.objects.filter(kind=NotificationKind.PAYMENT_REMINDER).count() == 1
        assert state(registration) == (RegistrationStatus.PENDING_PAYMENT, PaymentStatus.AWAITING)
    with time_machine.travel(start + timedelta(hours=72, seconds=1), tick=False):
        run_sweep()
        run_tasks()
        assert state(registration) == (RegistrationStatus.EXPIRED, PaymentStatus.UNPAID)
        assert WaitlistEntry.objects.get(user=waiting.user).status == WaitlistStatus.OFFERED
        assert (
            Notification.objects.filter(
                kind=NotificationKind.PAYMENT_EXPIRED, registration=registration
            ).count()
            == 1
        )
    rows = list(
        Activity.objects.filter(action="expire_payments").values_list("mode", "outcome", "user", "client")
    )
    assert rows == [("system", "OK", None, "payment sweep")]


def test_the_sweep_is_a_fixed_number_of_statements_whatever_the_batch(django_assert_max_num_queries):
    def statements(n: int) -> int:
        event = paid_event(capacity=50)
        registrations = [register(person(f"b{n}"), event) for _ in range(n)]
        for registration in registrations:
            overdue(registration)
        with CaptureQueriesContext(connection) as captured:
            sweep()
        assert all(state(r)[0] == RegistrationStatus.EXPIRED for r in registrations)
        return len(
            [q for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
        )

    one, many = statements(1), statements(12)
    assert one == many, (one, many)
    assert Activity.objects.filter(action="expire_payments").count() == 13  # one row per registration


def test_the_sweep_never_expires_a_paid_or_a_door_registration(manager):
    event = paid_event(capacity=5, at_door=True)
    paid = register(person(), event)
    _confirm(event, paid, manager)
    door = register(person(), event, payment_method="at_door")
    Registration.objects.update(payment_due_at=timezone.now() - timedelta(hours=1))
    sweep()
    assert state(paid) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)
    assert state(door) == (RegistrationStatus.CONFIRMED, PaymentStatus.AT_DOOR)


# ── the person's report ────────────────────────────────────────────────────────────────────────


def test_the_report_is_the_persons_own_and_never_for_a_date_in_the_future():
    event = paid_event(capacity=5)
    registration = register(person(), event)
    payer = Visitor(user=registration.user)
    tomorrow = timezone.localdate() + timedelta(days=1)
    assert refusal(
        "report_payment", payer, event_id=event.public_id, account_last5="12345", paid_on=tomorrow
    ) == ("VALIDATION_ERROR")
    assert refusal(
        "report_payment",
        person("other"),
        event_id=event.public_id,
        account_last5="12345",
        paid_on=timezone.localdate(),
    ) == ("PAYMENT_NOT_FOUND")
    call(
        "report_payment", payer, event_id=event.public_id, account_last5="12345", paid_on=timezone.localdate()
    )
    after = fresh(registration)
    assert (after.payment_status, after.reported_last5) == (PaymentStatus.CHECKING, "12345")
    rows = Activity.objects.filter(action="report_payment")
    assert sorted(rows.values_list("outcome", flat=True)) == ["OK", "PAYMENT_NOT_FOUND", "VALIDATION_ERROR"]
    assert all("12345" not in str(row.__dict__) for row in rows)


def test_reporting_for_a_free_event_is_not_found():
    event = EventFactory(capacity=5)
    visitor = person()
    register(visitor, event)
    assert refusal(
        "report_payment",
        visitor,
        event_id=event.public_id,
        account_last5="12345",
        paid_on=timezone.localdate(),
    ) == ("PAYMENT_NOT_FOUND")


# ── the person's data ────────────────────────────────────────────────────────────────────────


def test_deleting_the_account_cancels_a_pending_payment_and_frees_the_seat():
    from accounts.privacy import delete_account

    event = paid_event(capacity=1)
    registration = register(person(), event)
    waiting = person("waiting")
    WaitlistEntry.objects.create(event=event, user=waiting.user)
    delete_account(user=registration.user)
    assert not Registration.objects.filter(pk=registration.pk).exists()
    assert WaitlistEntry.objects.get(user=waiting.user).status == WaitlistStatus.OFFERED
    cancelled = Activity.objects.filter(action="cancel_registration", outcome="OK")
    assert cancelled.count() == 1


def test_the_export_has_the_payment_and_the_reported_digits_and_retention_blanks_them(manager, settings):
    from accounts.privacy import clear_expired_personal_data, export_personal_data
    from events.models import BankStatementRow

    settings.RETENTION_PAYMENTS_DAYS = 30
    event = paid_event(capacity=5)
    registration = register(person(), event)
    payer = Visitor(user=registration.user)
    call(
        "report_payment", payer, event_id=event.public_id, account_last5="13579", paid_on=timezone.localdate()
    )
    call(
        "apply_bank_row",
        SYSTEM,
        checksum="retained",
        amount=600,
        reference=fresh(registration).payment_reference_text,
        payer="林小姐",
        account_last5="13579",
    )
    [exported] = export_personal_data(user=registration.user)["registrations"]
    payment = exported["payment"]
    assert (payment["amount"], payment["status"], payment["reported_account_last5"]) == (600, "paid", "13579")
    assert payment["reference"] == fresh(registration).payment_reference_text

    clear_expired_personal_data(now=event.ends_at + timedelta(days=29))
    assert fresh(registration).reported_last5 == "13579"
    cleared = clear_expired_personal_data(now=event.ends_at + timedelta(days=31))
    assert cleared.payer_details == 2
    after = fresh(registration)
    assert (after.reported_last5, after.reported_paid_on, after.paid_amount) == ("", None, 600)
    row = BankStatementRow.objects.get(checksum="retained")
    assert (row.payer, row.account_last5, row.amount, row.state) == ("", "", 600, "matched")


def test_the_searchs_free_means_every_type_is_free():
    from events.selectors import search_events

    all_free = paid_event(public_id="evt-all-free", prices={"student": 0, "regular": 0})
    mixed = paid_event(public_id="evt-mixed", prices={"student": 0, "regular": 800})
    paid = paid_event(public_id="evt-paid-only", prices={"early": 600, "regular": 1200})
    free_ids = {e.public_id for e in search_events(visitor=Visitor(), price="free").events}
    paid_ids = {e.public_id for e in search_events(visitor=Visitor(), price="paid").events}
    assert all_free.public_id in free_ids and all_free.public_id not in paid_ids
    assert {mixed.public_id, paid.public_id} <= paid_ids and not {mixed.public_id, paid.public_id} & free_ids
    assert Event.objects.get(pk=paid.pk).price_amount == 600  # the lowest: "from TWD 600"
