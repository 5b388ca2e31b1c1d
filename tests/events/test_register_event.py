"""register_event, the use case: every refusal, idempotence, re-activation, stateVersion, the e-mail."""

from __future__ import annotations

import pytest
from django.core import mail
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from core.errors import AuthRequired, DomainError
from core.visitors import Visitor
from events import actions
from events.choices import NotificationKind, NotificationStatus, RegistrationStatus
from events.errors import EventCancelled, EventFull, EventNotFound, RegistrationClosed
from events.models import Activity, Notification, Registration
from events.services.registrations import register_event
from tests.factories import EventFactory, RegistrationFactory, UserFactory
from tests.tasks import run_tasks

from .conftest import MODES, activity, version

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def register(visitor, event_id):
    return actions.call("register_event", visitor=visitor, channel="api", event_id=event_id)


def test_a_signed_in_person_gets_a_confirmed_registration(person):
    event = EventFactory(capacity=2)
    result = register(person, event.public_id)
    registration = Registration.objects.get()
    assert (registration.user, registration.event, registration.status) == (
        person.user,
        event,
        RegistrationStatus.CONFIRMED,
    )
    assert (result.registration, result.created, result.already_registered) == (registration, True, False)
    assert (result.event, result.state_version, result.outcome) == (event, 1, "OK")


def test_registering_again_says_already_registered_and_changes_nothing(person):
    event = EventFactory()
    first = register(person, event.public_id)
    again = register(person, event.public_id)
    assert (again.registration, again.created, again.already_registered) == (first.registration, False, True)
    assert (again.state_version, again.outcome) == (1, "ALREADY_REGISTERED")
    assert Registration.objects.count() == 1
    assert version(person) == 1


def test_already_registered_wins_over_every_refusal(person, other_user):
    """Once registered, asking again is answered with the registration, whatever the event became."""
    event = EventFactory(capacity=2)
    RegistrationFactory(user=person.user, event=event)
    RegistrationFactory(user=other_user, event=event)  # now full
    assert register(person, event.public_id).already_registered is True


@pytest.mark.parametrize("visitor", ["anonymous", "nobody"])
def test_registering_needs_an_account(request, visitor):
    event = EventFactory()
    with pytest.raises(AuthRequired) as raised:
        register(request.getfixturevalue(visitor), event.public_id)
    assert (raised.value.code, raised.value.reason) == ("AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert not Registration.objects.exists()


def test_a_full_event_refuses_and_writes_nothing(person):
    event = EventFactory(capacity=2)
    RegistrationFactory.create_batch(2, event=event)
    with pytest.raises(EventFull) as raised:
        register(person, event.public_id)
    assert (raised.value.code, raised.value.reason) == ("CONFLICT", "EVENT_FULL")
    assert Registration.objects.filter(event=event).count() == 2
    assert version(person) == 0


def test_a_full_event_is_refused_on_its_first_read_before_any_transaction_opens(person):
    """The rush's refusal (`register_event_read_first`, the row's `read_first`): the seat read alone, no
    transaction (here, inside the test's own, no savepoint either), then the refusal's Activity row; a
    seat taken opens one."""
    event = EventFactory(capacity=1)
    RegistrationFactory(event=event)
    with CaptureQueriesContext(connection) as refused, pytest.raises(EventFull):
        register(person, event.public_id)
    sql = [query["sql"] for query in refused.captured_queries]
    recorded = next(index for index, text in enumerate(sql) if "events_activity" in text)
    assert [text.split()[0].upper() for text in sql[: recorded - 1]] == ["SELECT"]  # then the row's savepoint
    event.capacity = 2
    event.save()
    with CaptureQueriesContext(connection) as taken:
        register(person, event.public_id)
    assert "SAVEPOINT" in [query["sql"].split()[0].upper() for query in taken.captured_queries]


def test_cancelled_registrations_hold_no_seat(person):
    event = EventFactory(capacity=2)
    RegistrationFactory(event=event)
    RegistrationFactory.create_batch(3, event=event, status=RegistrationStatus.CANCELLED)
    assert register(person, event.public_id).created is True


def test_the_last_seat_can_be_taken(person):
    event = EventFactory(capacity=3)
    RegistrationFactory.create_batch(2, event=event)
    register(person, event.public_id)
    assert Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count() == 3


def test_a_started_event_is_closed(person):
    event = EventFactory(past=True)
    with pytest.raises(RegistrationClosed) as raised:
        register(person, event.public_id)
    assert (raised.value.code, raised.value.reason) == ("CONFLICT", "REGISTRATION_CLOSED")
    assert not Registration.objects.exists()


def test_a_cancelled_event_refuses(person):
    event = EventFactory(cancelled=True)
    with pytest.raises(EventCancelled) as raised:
        register(person, event.public_id)
    assert (raised.value.code, raised.value.reason) == ("CONFLICT", "EVENT_CANCELLED")
    assert not Registration.objects.exists()


@pytest.mark.parametrize(
    "event_id", [pytest.param("evt-draft", id="draft"), pytest.param("evt-nope", id="unknown")]
)
def test_a_draft_or_unknown_event_is_not_found(person, event_id):
    EventFactory(public_id="evt-draft", draft=True)
    with pytest.raises(EventNotFound) as raised:
        register(person, event_id)
    assert type(raised.value) is EventNotFound
    assert not Registration.objects.exists()


# ── re-activation ─────────────────────────────────────────────────────────────────────────────


def test_registering_after_cancelling_reactivates_the_same_row(person):
    event = EventFactory()
    first = register(person, event.public_id)
    actions.call("cancel_registration", visitor=person, channel="api", event_id=event.public_id)
    again = register(person, event.public_id)
    assert (again.registration.pk, again.created, again.already_registered) == (
        first.registration.pk,
        False,
        False,
    )
    assert again.state_version == 3
    registration = Registration.objects.get()
    assert registration.status == RegistrationStatus.CONFIRMED


def test_of_several_cancelled_registrations_the_newest_is_reactivated(person):
    event = EventFactory()
    older = RegistrationFactory(user=person.user, event=event, status=RegistrationStatus.CANCELLED)
    newer = RegistrationFactory(user=person.user, event=event, status=RegistrationStatus.CANCELLED)
    assert register(person, event.public_id).registration.pk == newer.pk
    older.refresh_from_db()
    newer.refresh_from_db()
    assert (older.status, newer.status) == (RegistrationStatus.CANCELLED, RegistrationStatus.CONFIRMED)
    assert Registration.objects.count() == 2


def test_reactivating_needs_a_free_seat_too(person, other_user):
    event = EventFactory(capacity=1)
    RegistrationFactory(user=person.user, event=event, status=RegistrationStatus.CANCELLED)
    RegistrationFactory(user=other_user, event=event)
    with pytest.raises(EventFull):
        register(person, event.public_id)
    assert Registration.objects.get(user=person.user).status == RegistrationStatus.CANCELLED


# ── the confirmation e-mail ───────────────────────────────────────────────────────────────────


def test_the_confirmation_is_queued_in_the_registrations_transaction_and_sent_by_the_worker(person):
    event = EventFactory()
    before = timezone.now()
    register(person, event.public_id)
    [queued] = DBTaskResult.objects.filter(task_path="events.mail.outbox.open_notification")
    assert queued.status == "READY"  # the task is the outbox: its row is the registration's one write for it
    assert (Notification.objects.count(), mail.outbox) == (0, [])  # nothing leaves inside the request
    run_tasks()
    [message] = mail.outbox
    assert message.to == [person.user.email]
    assert event.title in message.subject
    attachment, ticket = message.attachments  # the .ics, and the ticket's QR code (inline)
    assert ticket.get_content_type() == "image/png"
    assert attachment.filename == f"{event.public_id}.ics"
    [notification] = Notification.objects.all()
    assert (notification.kind, notification.email, notification.status, notification.attempts) == (
        NotificationKind.REGISTRATION_CONFIRMED,
        person.user.email,
        NotificationStatus.SENT,
        1,
    )
    assert notification.registration == Registration.objects.get()
    assert before <= notification.created_at <= queued.enqueued_at  # the change's time, not the worker's


def test_a_rolled_back_registration_queues_no_mail(person):
    event = EventFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        register(person, event.public_id)
        raise RuntimeError("the surrounding work failed")
    run_tasks()
    assert (Notification.objects.count(), mail.outbox) == (0, [])


def test_one_mail_for_a_registration_none_for_already_registered(person):
    event = EventFactory()
    for _ in range(3):
        register(person, event.public_id)
    run_tasks()
    assert len(mail.outbox) == 1


def test_a_reactivated_registration_is_confirmed_by_mail_again(person):
    event = EventFactory()
    register(person, event.public_id)
    actions.call("cancel_registration", visitor=person, channel="api", event_id=event.public_id)
    register(person, event.public_id)
    run_tasks()
    assert [message.to for message in mail.outbox] == [[person.user.email]] * 2


def test_no_mail_for_a_refusal(person):
    event = EventFactory(capacity=1)
    RegistrationFactory(event=event)
    with pytest.raises(EventFull):
        register(person, event.public_id)
    run_tasks()
    assert (Notification.objects.count(), mail.outbox) == (0, [])


def test_no_mail_for_an_account_without_an_address():
    visitor = Visitor(user=UserFactory(email=""))
    event = EventFactory()
    register(visitor, event.public_id)
    run_tasks()
    assert (Notification.objects.count(), mail.outbox) == (0, [])
    assert Registration.objects.get().status == RegistrationStatus.CONFIRMED


# ── Activity ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("mode", MODES)
def test_each_call_records_one_row_with_its_outcome(person, mode):
    event = EventFactory()
    for _ in range(2):
        actions.call("register_event", visitor=person, channel=mode, event_id=event.public_id)
    assert activity() == [("register_event", mode, "OK"), ("register_event", mode, "ALREADY_REGISTERED")]
    assert set(Activity.objects.values_list("event_id", "user")) == {(event.pk, person.user.pk)}


@pytest.mark.parametrize(
    ("traits", "visitor", "reason"),
    [
        pytest.param({}, "anonymous", "SIGN_IN_REQUIRED", id="anonymous"),
        pytest.param({"capacity": 1}, "person", "EVENT_FULL", id="full"),
        pytest.param({"past": True}, "person", "REGISTRATION_CLOSED", id="started"),
        pytest.param({"cancelled": True}, "person", "EVENT_CANCELLED", id="cancelled"),
        pytest.param({"draft": True}, "person", "EVENT_NOT_FOUND", id="draft"),
    ],
)
@pytest.mark.parametrize("mode", MODES)
def test_a_refused_call_records_its_reason(request, traits, visitor, reason, mode):
    event = EventFactory(**traits)
    if event.capacity:
        RegistrationFactory.create_batch(event.capacity, event=event)
    before = Activity.objects.count()
    with pytest.raises(DomainError):
        actions.call(
            "register_event", visitor=request.getfixturevalue(visitor), channel=mode, event_id=event.public_id
        )
    assert Activity.objects.count() == before + 1
    assert activity()[-1] == ("register_event", mode, reason)
    assert Activity.objects.order_by("id").last().event_id == event.pk


def test_a_page_redrawn_records_nothing(person):
    event = EventFactory()
    register_event(visitor=person, event_id=event.public_id)
    assert activity() == []
    assert Registration.objects.count() == 1
