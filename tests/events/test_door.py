"""The door's use cases (events/services/door.py) through their action rows: tickets that come and go
with registrations, check-in by ticket or by attendee, who may, undo, and what an agent may never see."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from core.errors import AuthRequired
from core.visitors import Mode, Visitor
from events import actions
from events.choices import StaffRole
from events.errors import (
    AttendeeNotFound,
    NotEventStaff,
    TicketCancelled,
    TicketForAnotherEvent,
    TicketUnknown,
    UndoTooLate,
)
from events.models import Activity, CheckIn, EventStaff, Registration
from events.policies import StaffFacts, may_check_in, may_manage_event, may_undo_check_in, scan_time_in_future
from tests.factories import EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def call(name, user, **data):
    return actions.call(name, visitor=Visitor(user=user), channel=Mode.API, **data)


def performed(name, user, **data):
    action = actions.ACTIONS[name]
    return actions.perform(action, actions.Caller(visitor=Visitor(user=user), channel=Mode.API), data)


@pytest.fixture
def door():
    event = EventFactory(public_id="evt-door", capacity=50)
    staff = UserFactory(username="door-staff", first_name="Mei")
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    attendee = UserFactory(
        username="attendee", first_name="Ada", last_name="Lovelace", email="ada@example.org"
    )
    call("register_event", attendee, event_id="evt-door")
    return event, staff, attendee, Registration.objects.get(user=attendee, event=event)


# ── the policies ──────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("staff", "manage", "check_in"),
    [
        (StaffFacts(), False, False),
        (StaffFacts(role=StaffRole.DOOR), False, True),
        (StaffFacts(role=StaffRole.MANAGER), True, True),
        (StaffFacts(superuser=True), True, True),
    ],
)
def test_who_may_run_an_event(staff, manage, check_in):
    assert bool(may_manage_event(staff)) is manage
    assert bool(may_check_in(staff)) is check_in


def test_undo_is_for_the_same_person_or_a_manager_and_only_for_minutes():
    now = timezone.now()
    door, manager = StaffFacts(role=StaffRole.DOOR), StaffFacts(role=StaffRole.MANAGER)
    assert may_undo_check_in(door, by_same_person=True, checked_in_at=now - timedelta(minutes=2), now=now)
    assert isinstance(
        may_undo_check_in(door, by_same_person=False, checked_in_at=now, now=now).refusal, UndoTooLate
    )
    assert may_undo_check_in(manager, by_same_person=False, checked_in_at=now, now=now)
    late = may_undo_check_in(manager, by_same_person=True, checked_in_at=now - timedelta(minutes=6), now=now)
    assert isinstance(late.refusal, UndoTooLate)
    assert isinstance(
        may_undo_check_in(StaffFacts(), by_same_person=True, checked_in_at=now, now=now).refusal,
        NotEventStaff,
    )


def test_a_device_clock_ahead_is_flagged_beyond_a_minute_of_drift():
    now = timezone.now()
    assert not scan_time_in_future(None, now=now)
    assert not scan_time_in_future(now + timedelta(seconds=30), now=now)
    assert scan_time_in_future(now + timedelta(minutes=5), now=now)


# ── tickets ───────────────────────────────────────────────────────────────────────────────────


def test_registering_issues_an_unguessable_ticket_and_registering_again_a_new_one(door):
    _event, staff, attendee, registration = door
    first = registration.ticket_code
    assert len(first) == 32 and first.isalnum() and first.isupper()  # 160 bits in base32
    call("cancel_registration", attendee, event_id="evt-door")
    with pytest.raises(TicketCancelled):
        call("check_in_attendee", staff, event_id="evt-door", ticket=first)
    call("register_event", attendee, event_id="evt-door")
    registration.refresh_from_db()
    assert registration.ticket_code not in (None, first)
    with pytest.raises(TicketUnknown):
        call("check_in_attendee", staff, event_id="evt-door", ticket=first)
    assert call("check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code).admitted


def test_cancelling_the_event_voids_every_ticket(door):
    _event, staff, _attendee, registration = door
    admin = UserFactory(username="root", is_superuser=True, is_staff=True)
    call("cancel_event", admin, event_id="evt-door")
    with pytest.raises(TicketCancelled):
        call("check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code)


# ── check-in ──────────────────────────────────────────────────────────────────────────────────


def test_a_scan_admits_once_and_then_says_when_and_by_whom(door):
    _event, staff, _attendee, registration = door
    first = performed(
        "check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code.lower()
    )
    assert first.status == 201
    body = first.body()
    assert (body["admitted"], body["alreadyCheckedIn"], body["attendee"]["name"]) == (
        True,
        False,
        "Ada Lovelace",
    )
    again = performed("check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code)
    assert again.status == 200
    body = again.body()
    assert (body["admitted"], body["alreadyCheckedIn"], body["checkedInBy"]) == (False, True, "Mei")
    assert body["checkedInAt"] == first.body()["checkedInAt"]
    assert CheckIn.objects.count() == 1
    assert registration.ticket_code not in str(body)


def test_the_same_scan_sent_twice_is_one_scan(door):
    _event, staff, _attendee, registration = door
    scan = uuid.uuid4()
    first = call(
        "check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code, scan_id=scan
    )
    again = call(
        "check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code, scan_id=scan
    )
    assert (first.admitted, again.admitted, again.already_checked_in) == (True, True, False)
    assert CheckIn.objects.count() == 1


def test_both_clocks_are_kept_and_a_future_scan_time_is_flagged_not_refused(door):
    _event, staff, _attendee, registration = door
    ahead = timezone.now() + timedelta(hours=1)
    result = call(
        "check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code, scanned_at=ahead
    )
    check_in = CheckIn.objects.get()
    assert result.admitted and check_in.scanned_at == ahead and check_in.scan_time_in_future
    assert abs(check_in.checked_in_at - timezone.now()) < timedelta(minutes=1)


def test_wrong_event_unknown_and_not_staff_are_refused(door):
    _event, staff, attendee, registration = door
    other = EventFactory(public_id="evt-other-door")
    EventStaff.objects.create(event=other, user=staff, role=StaffRole.DOOR)
    with pytest.raises(TicketForAnotherEvent):
        call("check_in_attendee", staff, event_id="evt-other-door", ticket=registration.ticket_code)
    with pytest.raises(TicketUnknown):
        call("check_in_attendee", staff, event_id="evt-door", ticket="A" * 32)
    outsider = UserFactory(username="outsider")
    EventStaff.objects.create(event=other, user=outsider, role=StaffRole.MANAGER)  # of another event
    with pytest.raises(NotEventStaff):
        call("check_in_attendee", outsider, event_id="evt-door", ticket=registration.ticket_code)
    with pytest.raises(NotEventStaff):  # the attendee themselves
        call("check_in_attendee", attendee, event_id="evt-door", ticket=registration.ticket_code)
    with pytest.raises(AuthRequired):
        call("check_in_attendee", None, event_id="evt-door", ticket=registration.ticket_code)
    with pytest.raises(AttendeeNotFound):
        call("check_in_attendee", staff, event_id="evt-door", attendee_id=registration.pk + 1000)
    assert not CheckIn.objects.exists()


def test_undo_within_minutes_by_the_same_staff_member(door):
    event, staff, _attendee, registration = door
    colleague = UserFactory(username="colleague")
    EventStaff.objects.create(event=event, user=colleague, role=StaffRole.DOOR)
    call("check_in_attendee", staff, event_id="evt-door", attendee_id=registration.pk)
    with pytest.raises(UndoTooLate):
        call("undo_check_in", colleague, event_id="evt-door", attendee_id=registration.pk)
    assert call("undo_check_in", staff, event_id="evt-door", attendee_id=registration.pk).undone
    assert call("check_in_attendee", colleague, event_id="evt-door", attendee_id=registration.pk).admitted
    with time_machine.travel(timezone.now() + timedelta(minutes=6)), pytest.raises(UndoTooLate):
        call("undo_check_in", colleague, event_id="evt-door", attendee_id=registration.pk)
    assert CheckIn.objects.filter(undone_at__isnull=True).count() == 1


def test_find_attendee_by_name_or_email_with_counts_and_a_masked_address(door):
    _event, staff, _attendee, registration = door
    UserFactory(username="bob", first_name="Bob", email="bob@example.org")
    call("register_event", UserFactory(username="bob"), event_id="evt-door")
    call("check_in_attendee", staff, event_id="evt-door", attendee_id=registration.pk)
    found = performed("find_attendee", staff, event_id="evt-door", query="lovelace").body()
    assert [a["name"] for a in found["attendees"]] == ["Ada Lovelace"]
    assert found["attendees"][0]["email"] == "a***@example.org" and found["attendees"][0]["checkedIn"] is True
    assert (found["confirmed"], found["checkedIn"]) == (2, 1)
    assert [
        a["name"]
        for a in performed("find_attendee", staff, event_id="evt-door", query="ADA@example.org").body()[
            "attendees"
        ]
    ] == ["Ada Lovelace"]
    assert len(performed("find_attendee", staff, event_id="evt-door").body()["attendees"]) == 2


@pytest.mark.parametrize("part", ["ada@", "a@example.org", "@example.org", "ada@example.or", "example"])
def test_find_attendee_by_part_of_an_email_finds_nobody(door, part):
    """The address is shown masked (a***@example.org): a search by a part of it would give it back a
    character at a time, so an address matches only whole."""
    _event, staff, _attendee, _registration = door
    found = performed("find_attendee", staff, event_id="evt-door", query=part).body()["attendees"]
    assert found == []


def test_each_check_in_is_one_activity_row_with_its_channel_and_never_the_code(door):
    _event, staff, _attendee, registration = door
    Activity.objects.all().delete()
    call("check_in_attendee", staff, event_id="evt-door", ticket=registration.ticket_code)
    with pytest.raises(TicketUnknown):
        call("check_in_attendee", staff, event_id="evt-door", ticket="B" * 32)
    rows = list(Activity.objects.order_by("id").values("action", "mode", "outcome", "event__public_id"))
    assert rows == [
        {"action": "check_in_attendee", "mode": "api", "outcome": "OK", "event__public_id": "evt-door"},
        {
            "action": "check_in_attendee",
            "mode": "api",
            "outcome": "TICKET_UNKNOWN",
            "event__public_id": "evt-door",
        },
    ]
    assert not Activity.objects.filter(visitor_token__icontains=registration.ticket_code[:8]).exists()


def test_managers_run_their_own_events_only(door):
    event, staff, _attendee, _registration = door
    manager = UserFactory(username="manager")
    EventStaff.objects.create(event=event, user=manager, role=StaffRole.MANAGER)
    EventFactory(public_id="evt-not-theirs")
    assert call("unpublish_event", manager, event_id="evt-door").changed
    from core.errors import PermissionDenied

    with pytest.raises(PermissionDenied):
        call("unpublish_event", manager, event_id="evt-not-theirs")
    with pytest.raises(PermissionDenied):
        call("unpublish_event", staff, event_id="evt-door")  # door staff only check people in
