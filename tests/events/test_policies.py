"""events.policies, branch by branch: pure functions over facts built here (no database, no clock).

Each row names the facts and the answer: allowed, or the exact refusal class with its code and reason.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.errors import AuthRequired
from events.choices import EventStatus
from events.errors import (
    AlreadyRegistered,
    EventCancelled,
    EventFull,
    EventNotFound,
    RegistrationClosed,
    RegistrationNotFound,
    SeatsAvailable,
    WaitlistClosed,
)
from events.models import Event
from events.policies import (
    ALLOWED,
    Answer,
    EventFacts,
    Permissions,
    VisitorFacts,
    may_cancel,
    may_join_waitlist,
    may_offer,
    may_register,
    may_save,
    permissions,
)

pytestmark = pytest.mark.unit

NOW = datetime(2030, 6, 1, 10, 0, tzinfo=UTC)
LATER = NOW + timedelta(days=7)
EARLIER = NOW - timedelta(hours=1)

PUBLISHED, CANCELLED, DRAFT = EventStatus.PUBLISHED, EventStatus.CANCELLED, EventStatus.DRAFT

# Refusals as the contract names them: (class, code, reason).
SIGN_IN = (AuthRequired, "AUTH_REQUIRED", "SIGN_IN_REQUIRED")
CANCELLED_EVENT = (EventCancelled, "CONFLICT", "EVENT_CANCELLED")
NOT_FOUND = (EventNotFound, "NOT_FOUND", "EVENT_NOT_FOUND")
NO_REGISTRATION = (RegistrationNotFound, "NOT_FOUND", "REGISTRATION_NOT_FOUND")
CLOSED = (RegistrationClosed, "CONFLICT", "REGISTRATION_CLOSED")
FULL = (EventFull, "CONFLICT", "EVENT_FULL")
ALREADY = (AlreadyRegistered, "CONFLICT", "ALREADY_REGISTERED")
FREE_SEATS = (SeatsAvailable, "CONFLICT", "SEATS_AVAILABLE")
WAITLIST_CLOSED = (WaitlistClosed, "CONFLICT", "WAITLIST_CLOSED")
OK = None


def event(
    status: str = PUBLISHED,
    starts_at: datetime = LATER,
    capacity: int | None = None,
    confirmed: int | None = 0,
    held: int = 0,
) -> EventFacts:
    return EventFacts(status=status, starts_at=starts_at, capacity=capacity, confirmed=confirmed, held=held)


ANONYMOUS = VisitorFacts(signed_in=False)
NO_SESSION = VisitorFacts(signed_in=False, has_session=False)
SIGNED_IN = VisitorFacts(signed_in=True)
REGISTERED = VisitorFacts(signed_in=True, registered=True)
WAITING = VisitorFacts(signed_in=True, waiting=True)
OFFERED = VisitorFacts(signed_in=True, waiting=True, holds_offer=True)


def assert_answer(answer: Answer, expected) -> None:
    if expected is OK:
        assert answer.allowed is True
        assert bool(answer) is True
        assert answer.refusal is None
        return
    error_class, code, reason = expected
    assert answer.allowed is False
    assert bool(answer) is False
    assert type(answer.refusal) is error_class  # exact: RegistrationNotFound is also an EventNotFound
    assert (answer.refusal.code, answer.refusal.reason) == (code, reason)


# ── EventFacts ─────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("capacity", "confirmed", "seats_left", "is_full"),
    [
        pytest.param(None, None, None, False, id="unlimited-count-not-read"),
        pytest.param(None, 40, None, False, id="unlimited-with-count"),
        pytest.param(3, 0, 3, False, id="empty"),
        pytest.param(3, 2, 1, False, id="one-seat-left"),
        pytest.param(3, 3, 0, True, id="exactly-full"),
        pytest.param(3, 5, 0, True, id="overfull-never-negative"),
        pytest.param(1, 1, 0, True, id="capacity-one-taken"),
    ],
)
def test_seats_left_and_is_full(capacity, confirmed, seats_left, is_full):
    facts = event(capacity=capacity, confirmed=confirmed)
    assert facts.seats_left == seats_left
    assert facts.is_full is is_full


@pytest.mark.parametrize("question", ["seats_left", "is_full"])
def test_seats_of_a_limited_event_read_without_the_count_is_a_programming_error(question):
    facts = event(capacity=3, confirmed=None)
    with pytest.raises(ValueError, match="confirmed count"):
        getattr(facts, question)


@pytest.mark.parametrize(
    ("starts_at", "started"),
    [
        pytest.param(EARLIER, True, id="before-now"),
        pytest.param(NOW, True, id="exactly-now"),
        pytest.param(NOW + timedelta(seconds=1), False, id="one-second-later"),
    ],
)
def test_has_started(starts_at, started):
    assert event(starts_at=starts_at).has_started(NOW) is started


def test_facts_of_an_event_copy_its_status_start_and_capacity():
    model = Event(status=CANCELLED, starts_at=LATER, capacity=12)  # unsaved: no database
    assert EventFacts.of(model, confirmed=4) == EventFacts(
        status=CANCELLED, starts_at=LATER, capacity=12, confirmed=4
    )
    assert EventFacts.of(model).confirmed is None


# ── Answer ────────────────────────────────────────────────────────────────────────────────────


def test_an_allowed_answer_enforces_nothing():
    assert Answer().allowed and ALLOWED.allowed and bool(ALLOWED)
    assert ALLOWED.enforce() is None


def test_a_refusal_is_raised_as_the_very_error_it_carries():
    refusal = EventFull("No seats.")
    answer = Answer(refusal)
    assert not answer.allowed and not answer
    with pytest.raises(EventFull) as raised:
        answer.enforce()
    assert raised.value is refusal
    assert raised.value.message == "No seats."


# ── may_register ──────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("facts", "visitor", "expected"),
    [
        pytest.param(event(), SIGNED_IN, OK, id="open-unlimited"),
        pytest.param(event(capacity=2, confirmed=1), SIGNED_IN, OK, id="open-one-seat-left"),
        pytest.param(event(), ANONYMOUS, SIGN_IN, id="anonymous"),
        pytest.param(event(status=DRAFT), ANONYMOUS, SIGN_IN, id="anonymous-is-asked-to-sign-in-first"),
        pytest.param(event(status=CANCELLED), SIGNED_IN, CANCELLED_EVENT, id="cancelled"),
        pytest.param(event(status=DRAFT), SIGNED_IN, NOT_FOUND, id="draft"),
        pytest.param(event(starts_at=NOW), SIGNED_IN, CLOSED, id="starts-now"),
        pytest.param(event(starts_at=EARLIER), SIGNED_IN, CLOSED, id="started"),
        pytest.param(event(capacity=2, confirmed=2), SIGNED_IN, FULL, id="full"),
        pytest.param(
            event(status=CANCELLED, starts_at=EARLIER, capacity=1, confirmed=1),
            SIGNED_IN,
            CANCELLED_EVENT,
            id="cancelled-before-started-before-full",
        ),
        pytest.param(
            event(starts_at=EARLIER, capacity=1, confirmed=1), SIGNED_IN, CLOSED, id="started-before-full"
        ),
        # Already registered: allowed, the use case answers alreadyRegistered.
        pytest.param(event(capacity=1, confirmed=1), REGISTERED, OK, id="registered-full"),
        pytest.param(event(starts_at=EARLIER), REGISTERED, OK, id="registered-started"),
        pytest.param(event(status=CANCELLED), REGISTERED, OK, id="registered-cancelled"),
    ],
)
def test_may_register(facts, visitor, expected):
    assert_answer(may_register(facts, visitor, now=NOW), expected)


def test_may_register_needs_the_count_for_a_limited_event():
    with pytest.raises(ValueError, match="confirmed count"):
        may_register(event(capacity=5, confirmed=None), SIGNED_IN, now=NOW)


# ── may_cancel ────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("facts", "visitor", "expected"),
    [
        pytest.param(event(), REGISTERED, OK, id="registered-upcoming"),
        pytest.param(event(capacity=1, confirmed=1), REGISTERED, OK, id="registered-full"),
        pytest.param(event(capacity=1, confirmed=None), REGISTERED, OK, id="no-count-needed"),
        pytest.param(event(status=CANCELLED), REGISTERED, OK, id="cancelled-event-may-be-tidied-up"),
        pytest.param(event(), ANONYMOUS, SIGN_IN, id="anonymous"),
        pytest.param(event(), SIGNED_IN, NO_REGISTRATION, id="not-registered"),
        pytest.param(event(starts_at=EARLIER), SIGNED_IN, NO_REGISTRATION, id="not-registered-started"),
        pytest.param(event(starts_at=NOW), REGISTERED, CLOSED, id="starts-now"),
        pytest.param(event(starts_at=EARLIER), REGISTERED, CLOSED, id="started"),
    ],
)
def test_may_cancel(facts, visitor, expected):
    assert_answer(may_cancel(facts, visitor, now=NOW), expected)


def test_may_cancel_after_start_says_cancelling_is_closed():
    refusal = may_cancel(event(starts_at=EARLIER), REGISTERED, now=NOW).refusal
    assert refusal.message == "The event has started; its registrations can no longer be cancelled."


# ── may_save ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("facts", "visitor", "expected"),
    [
        pytest.param(event(), SIGNED_IN, OK, id="signed-in"),
        pytest.param(event(), ANONYMOUS, OK, id="anonymous-with-session"),
        pytest.param(event(starts_at=EARLIER), ANONYMOUS, OK, id="started-may-still-be-saved"),
        pytest.param(event(capacity=1, confirmed=None), SIGNED_IN, OK, id="no-count-needed"),
        pytest.param(event(), NO_SESSION, SIGN_IN, id="no-session"),
        pytest.param(event(status=CANCELLED), NO_SESSION, SIGN_IN, id="no-session-before-status"),
        pytest.param(event(status=CANCELLED), SIGNED_IN, CANCELLED_EVENT, id="cancelled"),
        pytest.param(event(status=DRAFT), ANONYMOUS, NOT_FOUND, id="draft"),
    ],
)
def test_may_save(facts, visitor, expected):
    assert_answer(may_save(facts, visitor), expected)


def test_may_save_without_a_session_says_what_to_do():
    refusal = may_save(event(), NO_SESSION).refusal
    assert refusal.message == "Saving needs a session; enable cookies or sign in."


# ── permissions (what a page offers) ──────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("facts", "visitor", "expected"),
    [
        # register answers for a signed-in newcomer: an anonymous visitor is offered "sign in to register".
        pytest.param(
            event(),
            ANONYMOUS,
            Permissions(register=True, cancel=False, save=True, join_waitlist=False, leave_waitlist=False),
            id="anonymous",
        ),
        pytest.param(
            event(),
            NO_SESSION,
            Permissions(register=True, cancel=False, save=True, join_waitlist=False, leave_waitlist=False),
            id="first-visit",
        ),
        pytest.param(
            event(),
            SIGNED_IN,
            Permissions(register=True, cancel=False, save=True, join_waitlist=False, leave_waitlist=False),
            id="signed-in",
        ),
        pytest.param(
            event(),
            REGISTERED,
            Permissions(register=True, cancel=True, save=True, join_waitlist=False, leave_waitlist=False),
            id="registered",
        ),
        pytest.param(
            event(capacity=1, confirmed=1),
            SIGNED_IN,
            Permissions(register=False, cancel=False, save=True, join_waitlist=True, leave_waitlist=False),
            id="full",
        ),
        pytest.param(
            event(capacity=1, confirmed=1),
            REGISTERED,
            Permissions(register=False, cancel=True, save=True, join_waitlist=False, leave_waitlist=False),
            id="full-registered",
        ),
        pytest.param(
            event(starts_at=EARLIER),
            REGISTERED,
            Permissions(register=False, cancel=False, save=True, join_waitlist=False, leave_waitlist=False),
            id="started-registered",
        ),
        pytest.param(
            event(status=CANCELLED),
            REGISTERED,
            Permissions(register=False, cancel=True, save=False, join_waitlist=False, leave_waitlist=False),
            id="cancelled-registered",
        ),
        pytest.param(
            event(status=DRAFT),
            SIGNED_IN,
            Permissions(register=False, cancel=False, save=False, join_waitlist=False, leave_waitlist=False),
            id="draft",
        ),
    ],
)
def test_permissions(facts, visitor, expected):
    assert permissions(facts, visitor, now=NOW) == expected


@pytest.mark.parametrize(
    ("facts", "visitor", "expected"),
    [
        pytest.param(
            event(capacity=2, confirmed=1, held=1),
            WAITING,
            Permissions(register=False, cancel=False, save=True, join_waitlist=False, leave_waitlist=True),
            id="waiting",
        ),
        pytest.param(
            event(capacity=2, confirmed=1, held=1),
            OFFERED,
            Permissions(register=True, cancel=False, save=True, join_waitlist=False, leave_waitlist=True),
            id="offered",
        ),
        pytest.param(
            event(capacity=1, confirmed=1),
            ANONYMOUS,
            Permissions(register=False, cancel=False, save=True, join_waitlist=True, leave_waitlist=False),
            id="full-anonymous",
        ),
        pytest.param(
            event(capacity=1, confirmed=1, starts_at=NOW + timedelta(hours=1)),
            SIGNED_IN,
            Permissions(register=False, cancel=False, save=True, join_waitlist=False, leave_waitlist=False),
            id="full-too-close-to-start",
        ),
    ],
)
def test_permissions_on_the_waiting_list(facts, visitor, expected):
    assert permissions(facts, visitor, now=NOW) == expected


# ── the waiting list ──────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("facts", "visitor", "expected"),
    [
        pytest.param(event(capacity=1, confirmed=1), SIGNED_IN, OK, id="full"),
        pytest.param(event(capacity=2, confirmed=1, held=1), SIGNED_IN, OK, id="full-with-a-held-seat"),
        pytest.param(event(capacity=1, confirmed=1), ANONYMOUS, SIGN_IN, id="anonymous"),
        pytest.param(event(capacity=1, confirmed=1), REGISTERED, ALREADY, id="registered"),
        pytest.param(event(capacity=1, confirmed=0), WAITING, OK, id="again-is-idempotent"),
        pytest.param(event(capacity=2, confirmed=1), SIGNED_IN, FREE_SEATS, id="free-seat"),
        pytest.param(event(), SIGNED_IN, FREE_SEATS, id="no-seat-limit"),
        pytest.param(
            event(capacity=1, confirmed=1, status=CANCELLED), SIGNED_IN, CANCELLED_EVENT, id="cancelled"
        ),
        pytest.param(event(capacity=1, confirmed=1, status=DRAFT), SIGNED_IN, NOT_FOUND, id="draft"),
        pytest.param(event(capacity=1, confirmed=1, starts_at=EARLIER), SIGNED_IN, CLOSED, id="started"),
        pytest.param(
            event(capacity=1, confirmed=1, starts_at=NOW + timedelta(hours=2)),
            SIGNED_IN,
            WAITLIST_CLOSED,
            id="offers-stopped-2h-before",
        ),
        pytest.param(
            event(capacity=1, confirmed=1, starts_at=NOW + timedelta(hours=2, seconds=1)),
            SIGNED_IN,
            OK,
            id="just-before-offers-stop",
        ),
    ],
)
def test_may_join_waitlist(facts, visitor, expected):
    assert_answer(may_join_waitlist(facts, visitor, now=NOW), expected)


@pytest.mark.parametrize(
    ("facts", "visitor", "expected"),
    [
        pytest.param(
            event(capacity=2, confirmed=1, held=1), SIGNED_IN, FULL, id="seat-held-for-someone-else"
        ),
        pytest.param(event(capacity=2, confirmed=1, held=1), OFFERED, OK, id="seat-held-for-them"),
        pytest.param(
            event(capacity=2, confirmed=1, held=1, starts_at=EARLIER), OFFERED, CLOSED, id="offer-after-start"
        ),
        pytest.param(event(capacity=3, confirmed=1, held=1), SIGNED_IN, OK, id="a-seat-besides-the-held-one"),
    ],
)
def test_may_register_with_offers(facts, visitor, expected):
    assert_answer(may_register(facts, visitor, now=NOW), expected)


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        pytest.param(event(capacity=1), True, id="published-upcoming"),
        pytest.param(event(capacity=1, starts_at=NOW + timedelta(hours=2)), False, id="two-hours-before"),
        pytest.param(event(capacity=1, status=CANCELLED), False, id="cancelled"),
        pytest.param(event(capacity=1, status=DRAFT), False, id="draft"),
    ],
)
def test_may_offer(facts, expected):
    assert may_offer(facts, now=NOW) is expected


def test_the_offer_stop_follows_the_setting(settings):
    settings.WAITLIST_OFFERS_STOP_HOURS = 24
    assert may_offer(event(capacity=1, starts_at=NOW + timedelta(hours=23)), now=NOW) is False
    assert may_offer(event(capacity=1, starts_at=NOW + timedelta(hours=25)), now=NOW) is True


def test_held_seats_count_against_capacity():
    assert event(capacity=5, confirmed=2, held=2).seats_left == 1
    assert event(capacity=5, confirmed=3, held=2).is_full
