"""The door's API for scanner apps: POST/GET /api/events/<id>/check-ins (check_in_attendee, find_attendee).

A scan admits once (201), then says when and by whom (200); the same scanId is one scan; a device
clock ahead is flagged, not refused; every refusal is the envelope with its reason and status; a token
needs checkin:write and its person must be the event's door staff or manager; and the ticket code, a
credential, is never in an answer. On PostgreSQL, 20 scans of one ticket at once let one person in once.
"""

from __future__ import annotations

import json
import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from accounts.tokens import create_access_token
from core.visitors import Mode, Visitor
from events import actions
from events.choices import StaffRole
from events.models import Activity, CheckIn, EventStaff, Registration
from events.scopes import CHECKIN_WRITE, Scope
from tests.api.conftest import ApiClient, assert_envelope
from tests.factories import EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/api/events/evt-door-a/check-ins"
SCANNERS = 20


def register(user, event_id: str) -> Registration:
    actions.call("register_event", visitor=Visitor(user=user), channel=Mode.UI, event_id=event_id)
    return Registration.objects.get(user=user, event__public_id=event_id, status="confirmed")


def token_for(user, scopes=(CHECKIN_WRITE,)) -> dict[str, str]:
    _, raw = create_access_token(user=user, name="scanner", scopes=list(scopes), days=1)
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def scan(headers: dict[str, str], body, url: str = URL):
    """What a scanner app sends: JSON, a bearer token, no cookie and no CSRF token."""
    data = body if isinstance(body, str) else json.dumps(body)
    return ApiClient().post(url, data=data, content_type="application/json", **headers)


@pytest.fixture
def door():
    """Event A with its door staff member (Mei) and one attendee (Ada) holding a ticket."""
    event = EventFactory(public_id="evt-door-a", capacity=50)
    staff = UserFactory(username="door-mei", first_name="Mei")
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    attendee = UserFactory(username="ada", first_name="Ada", last_name="Lovelace", email="ada@example.org")
    return event, staff, register(attendee, "evt-door-a")


def no_code(response, registration: Registration) -> None:
    text = response.content.decode()
    code = registration.ticket_code
    assert code and code not in text and code.lower() not in text and code[:12] not in text


def test_a_scan_admits_with_201_then_says_already_checked_in_with_when_and_by_whom(door):
    _event, staff, registration = door
    headers = token_for(staff)
    first = scan(headers, {"ticket": registration.ticket_code, "scannedAt": timezone.now().isoformat()})
    assert first.status_code == 201, first.content
    body = first.json()
    assert (body["ok"], body["admitted"], body["alreadyCheckedIn"], body["eventId"]) == (
        True,
        True,
        False,
        "evt-door-a",
    )
    assert body["attendee"]["name"] == "Ada Lovelace" and body["attendee"]["email"] == "a***@example.org"
    assert body["checkedInBy"] == "Mei" and body["scanTimeInFuture"] is False
    again = scan(headers, {"ticket": registration.ticket_code.lower()})  # as typed at the door
    assert again.status_code == 200, again.content
    repeat = again.json()
    assert (repeat["admitted"], repeat["alreadyCheckedIn"]) == (False, True)
    assert (repeat["checkedInAt"], repeat["checkedInBy"]) == (body["checkedInAt"], "Mei")
    assert repeat["attendee"]["checkedIn"] is True
    check_in = CheckIn.objects.get()
    assert (check_in.registration, check_in.staff) == (registration, staff)
    no_code(first, registration)
    no_code(again, registration)


def test_the_same_scan_id_sent_twice_is_one_scan(door):
    _event, staff, registration = door
    headers = token_for(staff)
    body = {"ticket": registration.ticket_code, "scanId": str(uuid.uuid4())}
    first, resent = scan(headers, body), scan(headers, body)
    assert first.status_code == resent.status_code == 201
    assert resent.json()["admitted"] is True and resent.json()["alreadyCheckedIn"] is False
    assert resent.json()["checkedInAt"] == first.json()["checkedInAt"]
    assert CheckIn.objects.count() == 1
    assert str(CheckIn.objects.get().scan_id) == body["scanId"]


def test_a_scan_time_ahead_of_the_server_is_flagged_not_refused(door):
    _event, staff, registration = door
    ahead = (timezone.now() + timedelta(hours=1)).replace(microsecond=0)
    response = scan(token_for(staff), {"ticket": registration.ticket_code, "scannedAt": ahead.isoformat()})
    assert response.status_code == 201, response.content
    assert response.json()["scanTimeInFuture"] is True and response.json()["admitted"] is True
    check_in = CheckIn.objects.get()
    assert check_in.scanned_at == ahead and check_in.scan_time_in_future
    assert abs(check_in.checked_in_at - timezone.now()) < timedelta(minutes=1)


def test_a_ticket_of_another_event_a_cancelled_one_and_an_unknown_one_are_refused(door):
    _event, staff, registration = door
    EventFactory(public_id="evt-door-b")
    elsewhere = register(UserFactory(username="bea"), "evt-door-b")
    cancelled = register(UserFactory(username="cy"), "evt-door-a")
    actions.call(
        "cancel_registration", visitor=Visitor(user=cancelled.user), channel=Mode.UI, event_id="evt-door-a"
    )
    cancelled.refresh_from_db()  # the voided code stays in the row: it admits nobody
    headers = token_for(staff)

    other = scan(headers, {"ticket": elsewhere.ticket_code})
    assert_envelope(other, 409, "CONFLICT", "TICKET_OTHER_EVENT")
    void = scan(headers, {"ticket": cancelled.ticket_code})
    assert_envelope(void, 409, "CONFLICT", "TICKET_CANCELLED")
    unknown = scan(headers, {"ticket": "A" * 32})
    assert_envelope(unknown, 404, "NOT_FOUND", "TICKET_UNKNOWN")
    assert not CheckIn.objects.exists()
    for response, holder in [(other, elsewhere), (void, cancelled), (unknown, registration)]:
        no_code(response, holder)
    rows = Activity.objects.filter(action="check_in_attendee").order_by("id")
    assert list(rows.values_list("mode", "outcome", "event__public_id")) == [
        ("api", "TICKET_OTHER_EVENT", "evt-door-a"),
        ("api", "TICKET_CANCELLED", "evt-door-a"),
        ("api", "TICKET_UNKNOWN", "evt-door-a"),
    ]


def test_a_token_without_checkin_write_is_insufficient_scope(door):
    _event, staff, registration = door
    others = [scope.value for scope in Scope if scope.value != CHECKIN_WRITE]
    response = scan(token_for(staff, others), {"ticket": registration.ticket_code})
    body = assert_envelope(response, 403, "PERMISSION_DENIED", "INSUFFICIENT_SCOPE")
    assert body["scope"] == CHECKIN_WRITE
    listed = ApiClient().get(URL, **token_for(staff, others))
    assert_envelope(listed, 403, "PERMISSION_DENIED", "INSUFFICIENT_SCOPE")
    assert not CheckIn.objects.exists()


def test_door_staff_of_one_event_are_refused_at_another(door):
    _event, staff, _registration = door
    EventFactory(public_id="evt-door-b")
    elsewhere = register(UserFactory(username="bea"), "evt-door-b")
    headers = token_for(staff)
    response = scan(headers, {"ticket": elsewhere.ticket_code}, url="/api/events/evt-door-b/check-ins")
    assert_envelope(response, 403, "PERMISSION_DENIED", "NOT_EVENT_STAFF")
    listed = ApiClient().get("/api/events/evt-door-b/check-ins", **headers)
    assert_envelope(listed, 403, "PERMISSION_DENIED", "NOT_EVENT_STAFF")
    assert not CheckIn.objects.exists()
    no_code(response, elsewhere)


def test_an_attendees_own_token_cannot_check_them_in(door):
    _event, _staff, registration = door
    response = scan(token_for(registration.user), {"ticket": registration.ticket_code})
    assert_envelope(response, 403, "PERMISSION_DENIED", "NOT_EVENT_STAFF")
    assert not CheckIn.objects.exists()
    no_code(response, registration)


def test_without_a_token_or_session_the_door_asks_for_sign_in(door):
    _event, _staff, registration = door
    response = ApiClient().write("POST", URL, {"ticket": registration.ticket_code})  # CSRF token, no one
    assert_envelope(response, 401, "AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    no_code(response, registration)


def test_signed_in_door_staff_check_in_by_attendee_with_the_csrf_token(door):
    _event, staff, registration = door
    client = ApiClient()
    client.force_login(staff)
    response = client.write("POST", URL, {"attendeeId": registration.pk})
    assert response.status_code == 201, response.content
    assert response.json()["attendee"]["attendeeId"] == registration.pk
    no_code(response, registration)


@pytest.mark.parametrize(
    ("body", "reason", "field"),
    [
        ({"ticket": "X", "gate": "north"}, "UNKNOWN_PARAMETER", "gate"),
        ({"ticket": "X", "scan_id": str(uuid.uuid4())}, "UNKNOWN_PARAMETER", "scan_id"),  # camelCase only
        ({"ticket": "X", "event_id": "evt-door-b"}, "UNKNOWN_PARAMETER", "event_id"),  # the path's
        ({"ticket": "X", "scanId": "not-a-uuid"}, "VALIDATION_ERROR", "scanId"),
        ({"ticket": "X", "scannedAt": "yesterday"}, "VALIDATION_ERROR", "scannedAt"),
        ({"ticket": "X", "attendeeId": 1}, "VALIDATION_ERROR", "ticket"),  # exactly one of them
        ({}, "VALIDATION_ERROR", "ticket"),
        (["X"], "VALIDATION_ERROR", None),
    ],
)
def test_the_body_is_camel_case_and_nothing_else_is_accepted(door, body, reason, field):
    _event, staff, _registration = door
    response = scan(token_for(staff), body)
    envelope = assert_envelope(response, 400, "INVALID_INPUT", reason)
    if field is not None:
        assert list(envelope["fields"]) == [field]
    assert not CheckIn.objects.exists()


def test_a_query_parameter_on_a_scan_is_refused(door):
    _event, staff, registration = door
    response = scan(token_for(staff), {"ticket": registration.ticket_code}, url=f"{URL}?ticket=x")
    assert_envelope(response, 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert not CheckIn.objects.exists()


def test_the_list_says_who_is_in_with_the_counts_and_finds_by_query(door):
    _event, staff, registration = door
    register(UserFactory(username="bob", first_name="Bob", email="bob@example.org"), "evt-door-a")
    headers = token_for(staff)
    scan(headers, {"ticket": registration.ticket_code})
    client = ApiClient()
    listed = client.get(URL, **headers)
    assert listed.status_code == 200, listed.content
    body = listed.json()
    assert (body["eventId"], body["confirmed"], body["checkedIn"]) == ("evt-door-a", 2, 1)
    state = {a["name"]: (a["checkedIn"], a["checkedInBy"]) for a in body["attendees"]}
    assert state == {"Ada Lovelace": (True, "Mei"), "Bob": (False, "")}
    found = client.get(f"{URL}?query=lovelace", **headers).json()
    assert [a["name"] for a in found["attendees"]] == ["Ada Lovelace"]
    assert (found["confirmed"], found["checkedIn"]) == (2, 1)  # the counts are the whole event's
    no_code(listed, registration)
    assert_envelope(client.get(f"{URL}?q=ada", **headers), 400, "INVALID_INPUT", "UNKNOWN_PARAMETER")
    assert_envelope(client.get(f"{URL}?query=a&query=b", **headers), 400, "INVALID_INPUT", "VALIDATION_ERROR")
    assert_envelope(client.get("/api/events/evt-nowhere/check-ins", **headers), 404, "NOT_FOUND")


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_twenty_scans_of_one_ticket_at_once_admit_one_person_once():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks and serialises writers; run with DATABASE_URL=postgres://…")
    event = EventFactory(public_id="evt-door-a", capacity=10)
    registration = register(UserFactory(username="ada", first_name="Ada"), "evt-door-a")
    clients = []
    for n in range(SCANNERS):  # twenty devices at twenty doors, each signed in as its own staff member
        staff = UserFactory(username=f"door{n}")
        EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
        client = ApiClient()
        client.force_login(staff)
        clients.append(client)
    barrier = threading.Barrier(SCANNERS)
    responses: list = [None] * SCANNERS

    def attempt(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            body = {"ticket": registration.ticket_code, "scanId": str(uuid.uuid4())}
            responses[index] = clients[index].write("POST", URL, body)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(SCANNERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] * (SCANNERS - 1) + [201]
    bodies = [response.json() for response in responses]
    admitted = [body for body in bodies if body["admitted"]]
    assert len(admitted) == 1
    assert all(body["alreadyCheckedIn"] for body in bodies if not body["admitted"])
    first = admitted[0]
    assert {(body["checkedInAt"], body["checkedInBy"]) for body in bodies} == {
        (first["checkedInAt"], first["checkedInBy"])
    }
    check_in = CheckIn.objects.get()
    assert check_in.registration == registration and check_in.staff.username == first["checkedInBy"]
    for response in responses:
        no_code(response, registration)
