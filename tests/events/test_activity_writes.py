"""A write's Activity row is part of the write: every row of events/actions.py that changes something,
done through `perform`, commits its one row in its own transaction, so the row exists exactly when the
change does. A write that fails after its statements leaves neither; a refused write changes nothing
and is still recorded (after the call); the row is counted once the write has committed. And the
write's transaction is the only one: the use case's own `@transaction.atomic` adds no savepoint pair.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError, connection
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.db.models.signals import post_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from core.errors import DomainError
from core.visitors import SYSTEM, Mode, Visitor
from events import actions
from events.choices import EventStatus, NotificationStatus, StaffRole, WaitlistStatus
from events.models import (
    Activity,
    ActivityCount,
    CalendarFeed,
    CheckIn,
    Event,
    EventStaff,
    Notification,
    Registration,
    SavedEvent,
    WaitlistEntry,
)
from tests.factories import EventFactory, QuestionFactory, UserFactory, paid_event
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@dataclass
class Write:
    """One write ready to succeed: who calls, with what, and a look at what it changes."""

    visitor: Visitor
    data: dict[str, Any]
    state: Callable[[], Any]
    event: Event | None  # None: a write of no event (a person's calendar address)


def _call(name: str, user, **data) -> Any:
    return actions.call(name, visitor=Visitor(user=user), channel=Mode.API, **data)


def _person(name: str):
    return UserFactory(username=f"{name}-{UserFactory._meta.model.objects.count()}")


def _registrations(user) -> list[str]:
    return list(Registration.objects.filter(user=user).values_list("status", flat=True))


def _entries(user) -> list[str]:
    return list(WaitlistEntry.objects.filter(user=user).order_by("pk").values_list("status", flat=True))


def _status(event: Event) -> Callable[[], str]:
    return lambda: Event.objects.get(pk=event.pk).status


def save_event() -> Write:
    person, event = _person("saver"), EventFactory()
    return Write(
        Visitor(user=person), {"event_id": event.public_id}, lambda: SavedEvent.objects.count(), event
    )


def unsave_event() -> Write:
    person, event = _person("unsaver"), EventFactory()
    _call("save_event", person, event_id=event.public_id)
    return Write(
        Visitor(user=person), {"event_id": event.public_id}, lambda: SavedEvent.objects.count(), event
    )


def register_event() -> Write:
    person, event = _person("registrant"), EventFactory(capacity=10)
    return Write(Visitor(user=person), {"event_id": event.public_id}, lambda: _registrations(person), event)


def claim_offer() -> Write:
    """register_event by the person a freed seat is offered to: the claim of their waiting-list entry."""
    holder, person, event = _person("holder"), _person("claimant"), EventFactory(capacity=1)
    _call("register_event", holder, event_id=event.public_id)
    _call("join_waitlist", person, event_id=event.public_id)
    _call("cancel_registration", holder, event_id=event.public_id)  # the seat is offered to `person`
    assert _entries(person) == [WaitlistStatus.OFFERED]
    return Write(
        Visitor(user=person),
        {"event_id": event.public_id},
        lambda: (_registrations(person), _entries(person)),
        event,
    )


def cancel_registration() -> Write:
    person, event = _person("canceller"), EventFactory(capacity=10)
    _call("register_event", person, event_id=event.public_id)
    return Write(Visitor(user=person), {"event_id": event.public_id}, lambda: _registrations(person), event)


def _full_event():
    event = EventFactory(capacity=1)
    _call("register_event", _person("seated"), event_id=event.public_id)
    return event


def join_waitlist() -> Write:
    person, event = _person("joiner"), _full_event()
    return Write(Visitor(user=person), {"event_id": event.public_id}, lambda: _entries(person), event)


def leave_waitlist() -> Write:
    person, event = _person("leaver"), _full_event()
    _call("join_waitlist", person, event_id=event.public_id)
    return Write(Visitor(user=person), {"event_id": event.public_id}, lambda: _entries(person), event)


def resend_ticket() -> Write:
    person, event = _person("holder"), EventFactory(capacity=10)
    _call("register_event", person, event_id=event.public_id)
    return Write(
        Visitor(user=person), {"event_id": event.public_id}, lambda: DBTaskResult.objects.count(), event
    )


def _door() -> tuple[Any, Event, Registration]:
    staff, attendee, event = _person("door"), _person("attendee"), EventFactory(capacity=10)
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    _call("register_event", attendee, event_id=event.public_id)
    return staff, event, Registration.objects.get(user=attendee, event=event)


def _standing(registration: Registration) -> Callable[[], int]:
    return lambda: CheckIn.objects.filter(registration=registration, undone_at__isnull=True).count()


def check_in_attendee() -> Write:
    staff, event, registration = _door()
    data = {"event_id": event.public_id, "attendee_id": registration.pk}
    return Write(Visitor(user=staff), data, _standing(registration), event)


def undo_check_in() -> Write:
    staff, event, registration = _door()
    _call("check_in_attendee", staff, event_id=event.public_id, attendee_id=registration.pk)
    data = {"event_id": event.public_id, "attendee_id": registration.pk}
    return Write(Visitor(user=staff), data, _standing(registration), event)


def _organiser():
    return UserFactory(username=f"organiser-{Event.objects.count()}", is_staff=True, is_superuser=True)


def publish_event() -> Write:
    event = EventFactory(status=EventStatus.DRAFT)
    return Write(Visitor(user=_organiser()), {"event_id": event.public_id}, _status(event), event)


def unpublish_event() -> Write:
    event = EventFactory()
    return Write(Visitor(user=_organiser()), {"event_id": event.public_id}, _status(event), event)


def cancel_event() -> Write:
    event = EventFactory(capacity=10)
    _call("register_event", _person("registrant"), event_id=event.public_id)
    return Write(Visitor(user=_organiser()), {"event_id": event.public_id}, _status(event), event)


def offer_free_seats() -> Write:
    event, waiting = _full_event(), _person("waiting")
    _call("join_waitlist", waiting, event_id=event.public_id)
    Event.objects.filter(pk=event.pk).update(capacity=2)  # an organiser added a seat
    return Write(Visitor(user=_organiser()), {"event_id": event.public_id}, lambda: _entries(waiting), event)


def cancel_attendee_registration() -> Write:
    person, event = _person("attendee"), EventFactory(capacity=10)
    _call("register_event", person, event_id=event.public_id)
    registration = Registration.objects.get(user=person, event=event)
    data = {"registration_id": registration.pk}
    return Write(Visitor(user=_organiser()), data, lambda: _registrations(person), event)


def edit_event() -> Write:
    event = EventFactory(capacity=10)
    data = {"event_pk": event.pk, "changes": {"title": "Renamed in the admin", "capacity": 12}}
    return Write(Visitor(user=_organiser()), data, lambda: Event.objects.get(pk=event.pk).title, event)


def resend_notification() -> Write:
    event = EventFactory(capacity=10)
    _call("register_event", _person("reader"), event_id=event.public_id)
    run_tasks()  # the confirmation's Notification row
    notification = Notification.objects.get(event=event)
    Notification.objects.filter(pk=notification.pk).update(status=NotificationStatus.FAILED, attempts=9)
    data = {"notification_id": notification.pk}
    return Write(
        Visitor(user=_organiser()), data, lambda: Notification.objects.get(pk=notification.pk).status, event
    )


def _team(event: Event) -> Callable[[], list[tuple[str, str]]]:
    return lambda: list(EventStaff.objects.filter(event=event).values_list("user__username", "role"))


def add_event_staff() -> Write:
    event, helper = EventFactory(), _person("helper")
    data = {"event_id": event.public_id, "username": helper.username, "role": StaffRole.DOOR}
    return Write(Visitor(user=_organiser()), data, _team(event), event)


def remove_event_staff() -> Write:
    event, helper = EventFactory(), _person("helper")
    EventStaff.objects.create(event=event, user=helper, role=StaffRole.MANAGER)
    data = {"event_id": event.public_id, "username": helper.username}
    return Write(Visitor(user=_organiser()), data, _team(event), event)


def reset_calendar_feed() -> Write:
    person = _person("subscriber")
    return Write(
        Visitor(user=person),
        {},
        lambda: list(CalendarFeed.objects.filter(user=person).values_list("token")),
        None,
    )


def update_registration_answers() -> Write:
    person, event = _person("answerer"), EventFactory(capacity=10)
    QuestionFactory(event=event, identifier="company")
    _call("register_event", person, event_id=event.public_id, answers={"company": "ACME"})
    data = {"event_id": event.public_id, "answers": {"company": "Other"}}
    return Write(Visitor(user=person), data, lambda: Registration.objects.get(user=person).answers, event)


def _pending() -> tuple[Any, Event]:
    person, event = _person("pending"), EventFactory(capacity=10, requires_approval=True)
    _call("register_event", person, event_id=event.public_id)
    return person, event


def approve_registration() -> Write:
    person, event = _pending()
    data = {"registration_id": Registration.objects.get(user=person).pk}
    return Write(Visitor(user=_organiser()), data, lambda: _registrations(person), event)


def decline_registration() -> Write:
    person, event = _pending()
    data = {"registration_id": Registration.objects.get(user=person).pk}
    return Write(Visitor(user=_organiser()), data, lambda: _registrations(person), event)


def update_staff_answers() -> Write:
    person, event = _person("annotated"), EventFactory(capacity=10)
    QuestionFactory(event=event, identifier="seat_row", staff_only=True)
    _call("register_event", person, event_id=event.public_id)
    data = {"registration_id": Registration.objects.get(user=person).pk, "answers": {"seat_row": "front"}}
    return Write(
        Visitor(user=_organiser()), data, lambda: Registration.objects.get(user=person).answers, event
    )


def merge_saved_events() -> Write:
    person, event = _person("signing-in"), EventFactory()
    SavedEvent.objects.create(event=event, visitor_token="session-token-0001")
    return Write(
        Visitor(user=person),
        {"token": "session-token-0001"},
        lambda: list(SavedEvent.objects.filter(user=person).values_list("event_id", flat=True)),
        None,
    )


def send_reminders() -> Write:
    """The worker's run, as the declared system actor: a confirmed attendee's reminder is due."""
    event = EventFactory(capacity=10, starts_at=timezone.now() + timedelta(hours=2))
    _call("register_event", _person("reminded"), event_id=event.public_id)
    return Write(SYSTEM, {"event_id": event.public_id}, lambda: DBTaskResult.objects.count(), event)


def _awaiting_payment() -> tuple[Any, Event, Registration]:
    person, event = _person("payer"), paid_event(capacity=10)
    _call("register_event", person, event_id=event.public_id)
    return person, event, Registration.objects.get(user=person, event=event)


def _payment_of(person) -> Callable[[], tuple[str, str]]:
    return lambda: tuple(
        Registration.objects.filter(user=person).values_list("status", "payment_status").get()
    )


def report_payment() -> Write:
    person, event, _registration = _awaiting_payment()
    data = {"event_id": event.public_id, "account_last5": "12345", "paid_on": timezone.localdate()}
    return Write(Visitor(user=person), data, _payment_of(person), event)


def confirm_payment() -> Write:
    person, event, registration = _awaiting_payment()
    data = {"event_id": event.public_id, "attendee_id": registration.pk}
    return Write(Visitor(user=_organiser()), data, _payment_of(person), event)


def refund_payment() -> Write:
    person, event, registration = _awaiting_payment()
    organiser = _organiser()
    _call("confirm_payment", organiser, event_id=event.public_id, attendee_id=registration.pk)
    _call("cancel_registration", person, event_id=event.public_id)
    data = {"event_id": event.public_id, "attendee_id": registration.pk}
    return Write(Visitor(user=organiser), data, _payment_of(person), event)


def expire_payments() -> Write:
    person, event, _registration = _awaiting_payment()
    Registration.objects.filter(user=person).update(payment_due_at=timezone.now() - timedelta(minutes=1))
    return Write(SYSTEM, {}, _payment_of(person), event)


def apply_bank_row() -> Write:
    person, event, registration = _awaiting_payment()
    data = {
        "checksum": f"row-{registration.pk}",
        "line": 2,
        "amount": registration.amount,
        "reference": registration.payment_reference_text,
        "payer": "王小明",
        "account_last5": "12345",
    }
    return Write(SYSTEM, data, _payment_of(person), event)


#: Each kind of write, by its action's name (a waiting list's claim is a registration).
WRITES: dict[str, tuple[str, Callable[[], Write]]] = {
    "save_event": ("save_event", save_event),
    "unsave_event": ("unsave_event", unsave_event),
    "register_event": ("register_event", register_event),
    "claim an offered seat": ("register_event", claim_offer),
    "cancel_registration": ("cancel_registration", cancel_registration),
    "join_waitlist": ("join_waitlist", join_waitlist),
    "leave_waitlist": ("leave_waitlist", leave_waitlist),
    "resend_ticket": ("resend_ticket", resend_ticket),
    "check_in_attendee": ("check_in_attendee", check_in_attendee),
    "undo_check_in": ("undo_check_in", undo_check_in),
    "publish_event": ("publish_event", publish_event),
    "unpublish_event": ("unpublish_event", unpublish_event),
    "cancel_event": ("cancel_event", cancel_event),
    "offer_free_seats": ("offer_free_seats", offer_free_seats),
    "cancel_attendee_registration": ("cancel_attendee_registration", cancel_attendee_registration),
    "update_registration_answers": ("update_registration_answers", update_registration_answers),
    "approve_registration": ("approve_registration", approve_registration),
    "decline_registration": ("decline_registration", decline_registration),
    "edit_event": ("edit_event", edit_event),
    "resend_notification": ("resend_notification", resend_notification),
    "add_event_staff": ("add_event_staff", add_event_staff),
    "remove_event_staff": ("remove_event_staff", remove_event_staff),
    "reset_calendar_feed": ("reset_calendar_feed", reset_calendar_feed),
    "update_staff_answers": ("update_staff_answers", update_staff_answers),
    "merge_saved_events": ("merge_saved_events", merge_saved_events),
    "send_reminders": ("send_reminders", send_reminders),
    "report_payment": ("report_payment", report_payment),
    "confirm_payment": ("confirm_payment", confirm_payment),
    "refund_payment": ("refund_payment", refund_payment),
    "expire_payments": ("expire_payments", expire_payments),
    "apply_bank_row": ("apply_bank_row", apply_bank_row),
}


def _perform(name: str, write: Write, *, channel: Mode = Mode.MCP, client: str = "") -> actions.Performed:
    caller = actions.Caller(visitor=write.visitor, channel=channel, client=client)
    return actions.perform(actions.ACTIONS[name], caller, write.data)


def _new_rows(since: int) -> list[Activity]:
    return list(Activity.objects.filter(pk__gt=since).order_by("pk"))


def _last_row() -> int:
    return Activity.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _counts_equal_rows() -> bool:
    grouped = (
        Activity.objects.annotate(day=TruncDate("created_at", tzinfo=timezone.get_default_timezone()))
        .values_list("day", "mode", "action", "outcome", "client")
        .annotate(n=Count("*"))
        .order_by()
    )
    rows = {tuple(key): n for *key, n in grouped}
    counts = {
        (row.day, row.mode, row.action, row.outcome, row.client): row.calls
        for row in ActivityCount.objects.all()
        if row.calls
    }
    return rows == counts


def test_every_write_of_the_action_table_has_a_case_here():
    writing = {name for name, row in actions.ACTIONS.items() if row.writes}
    assert {name for name, _ in WRITES.values()} == writing


@pytest.mark.parametrize("case", WRITES)
def test_a_write_commits_its_one_activity_row_with_it_and_the_row_is_counted(case):
    name, make = WRITES[case]
    write = make()
    before, since = write.state(), _last_row()

    performed = _perform(name, write, client="Claude (claude.ai)")

    assert performed.error is None, performed.error
    assert write.state() != before, "the write changed nothing"
    [row] = _new_rows(since)
    assert (row.action, row.mode, row.outcome, row.client) == (
        name,
        "mcp",
        performed.outcome,
        "Claude (claude.ai)",
    )
    user_id = write.visitor.user.pk if write.visitor.user else None  # None: the site itself
    assert row.event_id == (write.event.pk if write.event else None) and row.user_id == user_id
    assert row.counted and _counts_equal_rows()


@pytest.mark.django_db(transaction=True)  # the write's own transaction is the outermost: a real ROLLBACK
def test_a_write_that_fails_after_its_statements_leaves_neither_the_change_nor_its_row():
    """Every kind of write in one test: a transactional test empties the database after it, which on
    PostgreSQL costs seconds, once here rather than once a case."""
    failing = ""

    def lost(sender, instance, **kwargs):
        # After the row's INSERT ran, before the commit: stands in for the database going away there.
        if instance.action == failing:
            raise DatabaseError("the connection was lost before the commit")

    post_save.connect(lost, sender=Activity)
    bulk = Activity.objects.bulk_create

    def lost_in_bulk(rows, *args, **kwargs):  # a batch's rows (the sweep's) are one INSERT, no signal
        made = bulk(rows, *args, **kwargs)
        if any(row.action == failing for row in rows):
            raise DatabaseError("the connection was lost before the commit")
        return made

    Activity.objects.bulk_create = lost_in_bulk  # type: ignore[method-assign]
    try:
        for case, (name, make) in WRITES.items():
            write = make()
            before, since, failing = write.state(), _last_row(), name
            with pytest.raises(DatabaseError):
                _perform(name, write)
            failing = ""
            assert write.state() == before, case
            assert _new_rows(since) == [], case
    finally:
        post_save.disconnect(lost, sender=Activity)
        del Activity.objects.bulk_create
    assert _counts_equal_rows()


def _cancelled(write: Write) -> Write:
    Event.objects.filter(pk=write.event.pk).update(status=EventStatus.CANCELLED)
    return write


def _by(who: str) -> Callable[[Write], Write]:
    """The same write by someone else: a new person named `who`, or nobody signed in ("")."""
    return lambda write: Write(
        Visitor(user=_person(who)) if who else Visitor(), write.data, write.state, write.event
    )


#: A write refused, after its use case has read (and locked) what it needed.
REFUSALS: dict[str, Callable[[Write], Write]] = {
    "register_event": _cancelled,
    "join_waitlist": _by(""),
    "check_in_attendee": _by("outsider"),
    "publish_event": _by("not-an-organiser"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refused_write_changes_nothing_and_its_refusal_is_recorded_and_counted(case):
    name, make = WRITES[case]
    write = make()
    refused = REFUSALS[case](write)
    before, since = write.state(), _last_row()

    performed = _perform(name, refused)

    assert isinstance(performed.error, DomainError)
    assert write.state() == before
    [row] = _new_rows(since)
    assert (row.action, row.outcome) == (name, performed.error.reason) and row.counted
    assert _counts_equal_rows()


def test_every_writing_use_case_runs_in_the_transaction_perform_opens_not_a_savepoint_of_its_own():
    for name, row in actions.ACTIONS.items():
        if row.writes:
            assert actions.in_transaction(row.use_case) is not row.use_case, (
                f"{name}: perform would call its use case's @transaction.atomic as a savepoint"
            )
    search = actions.ACTIONS["search_events"].use_case
    assert actions.in_transaction(search) is search  # no transaction of its own: called as it is


def _savepoints(run: Callable[[], Any]) -> int:
    with CaptureQueriesContext(connection) as captured:
        run()
    return sum(query["sql"].startswith("SAVEPOINT") for query in captured.captured_queries)


@pytest.mark.django_db(transaction=True)  # outside any test transaction, as a request runs
def test_a_write_through_perform_makes_no_more_savepoints_than_its_use_case_alone():
    for case, (name, make) in WRITES.items():  # in one test, as above
        alone, through = make(), make()
        use_case = actions.ACTIONS[name].use_case
        since = _last_row()

        own = _savepoints(lambda: use_case(visitor=alone.visitor, **alone.data))  # noqa: B023 (run at once)
        made = _savepoints(lambda: _perform(name, through))  # noqa: B023 (run at once)

        # The use case's own guards (an IntegrityError caught), never a pair for the row.
        assert made == own, case
        assert [row.action for row in _new_rows(since)] == [name], case


def test_a_writes_row_is_counted_on_the_sites_day():
    write = save_event()
    _perform("save_event", write)
    [count] = ActivityCount.objects.filter(action="save_event")
    row = Activity.objects.get(action="save_event")
    assert count.day == timezone.localtime(row.created_at, timezone.get_default_timezone()).date()
    assert row.created_at > timezone.now() - timedelta(minutes=1)
