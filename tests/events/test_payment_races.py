"""Payments under real races on PostgreSQL (row locks, threads, each its own connection): a
confirmation racing the expiry, two imports of the same statement, a rush on paid types, a
cancellation racing a confirmation, and two refunds at once. Each ends in exactly one outcome."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from core.visitors import SYSTEM, Mode, Visitor
from events import actions
from events.choices import HOLDING_SEAT, BankRowState, PaymentStatus, RegistrationStatus
from events.models import BankStatementRow, Event, Notification, Registration, WaitlistEntry
from tests.api.conftest import ApiClient
from tests.factories import UserFactory, paid_event

pytestmark = [
    pytest.mark.integration,
    pytest.mark.postgres_only,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture(autouse=True)
def _postgres():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks and serialises writers; run with DATABASE_URL=postgres://…")


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run `calls` at once, each in its own thread and connection; their results (or their errors)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = calls[index]()
        except Exception as error:
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def perform(name: str, visitor: Visitor, **data) -> actions.Performed:
    return actions.perform(actions.ACTIONS[name], actions.Caller(visitor=visitor, channel=Mode.API), data)


def organiser() -> Visitor:
    return Visitor(user=UserFactory(is_staff=True, is_superuser=True))


def pending(event: Event) -> Registration:
    user = UserFactory()
    perform("register_event", Visitor(user=user), event_id=event.public_id)
    return Registration.objects.get(user=user, event=event)


def outcome(registration: Registration) -> tuple[str, str]:
    return tuple(
        Registration.objects.filter(pk=registration.pk).values_list("status", "payment_status").get()
    )


@pytest.mark.parametrize("attempt", range(3))
def test_a_confirmation_racing_the_expiry_has_exactly_one_outcome(attempt):
    event = paid_event(capacity=1)
    registration = pending(event)
    WaitlistEntry.objects.create(event=event, user=UserFactory())  # a freed seat is theirs
    Registration.objects.filter(pk=registration.pk).update(
        payment_due_at=timezone.now() - timedelta(seconds=1)
    )
    manager = organiser()
    confirmed, swept = race(
        lambda: perform("confirm_payment", manager, event_id=event.public_id, attendee_id=registration.pk),
        lambda: perform("expire_payments", SYSTEM),
    )
    if confirmed.error is None:
        assert outcome(registration) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID)
        assert swept.result.expired == []
    else:
        assert confirmed.error.reason == "PAYMENT_EXPIRED"
        assert outcome(registration) == (RegistrationStatus.EXPIRED, PaymentStatus.UNPAID)
        assert len(swept.result.expired) == 1
    event.refresh_from_db()
    held = Registration.objects.filter(event=event, status__in=HOLDING_SEAT).count()
    offered = WaitlistEntry.objects.filter(event=event, status="offered").count()
    assert held + offered == 1 == event.seats_taken


def test_two_imports_of_the_same_rows_apply_each_once():
    event = paid_event(capacity=10)
    registrations = [pending(event) for _ in range(4)]
    rows = [
        {"checksum": f"row-{r.pk}", "line": n + 2, "amount": 600, "reference": r.payment_reference_text}
        for n, r in enumerate(registrations)
    ] + [{"checksum": "stranger", "line": 9, "amount": 500, "reference": "生日快樂"}]

    def import_all() -> list[str]:
        return [perform("apply_bank_row", SYSTEM, **row).outcome for row in rows]

    first, second = race(import_all, import_all)
    applied = [a if a != "ALREADY_IMPORTED" else b for a, b in zip(first, second, strict=True)]
    assert sorted(applied) == ["MATCHED"] * 4 + ["NO_MATCH"]
    assert sorted([*first, *second]).count("ALREADY_IMPORTED") == 5
    assert BankStatementRow.objects.count() == 5
    assert all(outcome(r) == (RegistrationStatus.CONFIRMED, PaymentStatus.PAID) for r in registrations)
    assert Notification.objects.filter(kind="payment_confirmed").count() in (0, 4)  # written by the worker
    assert set(BankStatementRow.objects.values_list("state", flat=True)) == {
        BankRowState.MATCHED,
        BankRowState.NO_MATCH,
    }


def test_the_rush_with_paid_types_never_oversells():
    event = paid_event(public_id="evt-paid-rush", capacity=10, prices={"student": 600, "regular": 1200})
    event.ticket_types.filter(identifier="student").update(cap=4)
    from events.models import refresh_ticket_form

    refresh_ticket_form(event.pk)
    clients = []
    for n in range(30):
        client = ApiClient()
        client.force_login(UserFactory(username=f"payrush{n}"))
        clients.append((client, "student" if n % 2 else "regular"))

    def attempt(client, ticket_type):
        return lambda: (
            client.write(
                "POST", "/api/events/evt-paid-rush/registration", {"ticket_type": ticket_type}
            ).status_code
        )

    statuses = race(*(attempt(client, kind) for client, kind in clients))
    assert statuses.count(201) == 10, statuses
    held = Registration.objects.filter(event=event, status__in=HOLDING_SEAT)
    assert held.count() == 10 == Event.objects.get(pk=event.pk).seats_taken
    assert held.filter(ticket_type="student").count() <= 4
    assert set(held.values_list("status", flat=True)) == {RegistrationStatus.PENDING_PAYMENT}


@pytest.mark.parametrize("attempt", range(3))
def test_a_cancellation_racing_a_confirmation_ends_consistent(attempt):
    event = paid_event(capacity=5)
    registration = pending(event)
    manager, payer = organiser(), Visitor(user=registration.user)
    confirmed, cancelled = race(
        lambda: perform("confirm_payment", manager, event_id=event.public_id, attendee_id=registration.pk),
        lambda: perform("cancel_registration", payer, event_id=event.public_id),
    )
    assert cancelled.error is None
    if confirmed.error is None:  # paid first, then cancelled: the money is to refund
        assert outcome(registration) == (RegistrationStatus.CANCELLED, PaymentStatus.PAID)
    else:
        assert confirmed.error.reason == "PAYMENT_NOT_PENDING"
        assert outcome(registration) == (RegistrationStatus.CANCELLED, PaymentStatus.UNPAID)
    assert Event.objects.get(pk=event.pk).seats_taken == 0


@pytest.mark.parametrize("attempt", range(3))
def test_a_refund_racing_a_second_refund_is_recorded_once(attempt):
    event = paid_event(capacity=5)
    registration = pending(event)
    manager = organiser()
    perform("confirm_payment", manager, event_id=event.public_id, attendee_id=registration.pk)
    perform("cancel_registration", Visitor(user=registration.user), event_id=event.public_id)
    first, second = race(
        lambda: perform("refund_payment", manager, event_id=event.public_id, attendee_id=registration.pk),
        lambda: perform(
            "refund_payment", manager, event_id=event.public_id, attendee_id=registration.pk, amount=100
        ),
    )
    errors = [p.error.reason for p in (first, second) if p.error is not None]
    assert errors == ["PAYMENT_NOT_REFUNDABLE"]
    after = Registration.objects.get(pk=registration.pk)
    assert after.payment_status == PaymentStatus.REFUNDED and after.refunded_amount in (600, 100)
