"""The runner's seat steps (evals/seats.py) on the seeded catalogue, without a browser: through the
product's use cases they give the full event back its seeded seats whatever earlier cases left, and a
freed seat goes to the case's account or the step fails."""

from __future__ import annotations

import io
import json
import logging

import pytest
from django.core.management import call_command

from core.visitors import Visitor
from evals.seats import EVAL_ACCOUNT_PREFIX, SeatError, free_seat, main, reset_seats, seats, serve
from events import actions
from events.choices import RegistrationStatus, WaitlistStatus
from events.models import Activity, Registration, WaitlistEntry
from tests.factories import UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

FULL = "evt-django-code-review-hours"
SEEDED = {"capacity": 2, "confirmed": 2, "held": 0, "waiting": 0}


@pytest.fixture(autouse=True)
def seeded():
    call_command("seed_demo", verbosity=0)


def account(name: str = ""):
    return UserFactory(username=f"{EVAL_ACCOUNT_PREFIX}{name or 'x'}")


def join(user) -> None:
    actions.call("join_waitlist", visitor=Visitor(user=user), channel="ui", event_id=FULL)


def status(user) -> str:
    return WaitlistEntry.objects.filter(event__public_id=FULL, user=user).latest("id").status


def test_reset_on_the_seed_changes_nothing():
    before = Activity.objects.count()
    assert reset_seats(FULL) == {
        "event": FULL,
        "left": 0,
        "declinedOffers": 0,
        "cancelled": 0,
        "registeredAgain": [],
        "seats": SEEDED,
    }
    assert Activity.objects.count() == before


def test_a_freed_seat_goes_to_the_case_account_and_is_held_for_it():
    mine = account("mine")
    join(mine)
    done = free_seat(FULL, mine.username)
    assert done["cancelledBy"] == "yating.lin" and done["offeredTo"] == mine.username and done["expiresAt"]
    assert done["seats"] == {"capacity": 2, "confirmed": 1, "held": 1, "waiting": 0}
    assert status(mine) == WaitlistStatus.OFFERED


def test_reset_undoes_what_earlier_cases_left_then_the_next_case_gets_the_seat():
    """Earlier cases: one account claimed a freed seat; later one holds an offer and two wait behind
    it. The next case's account must end up alone in line for a full event, and get the seat freed."""
    claimed, holder, first, second = (account(name) for name in ("claimed", "holder", "first", "second"))
    join(claimed)
    free_seat(FULL, claimed.username)
    actions.call("register_event", visitor=Visitor(user=claimed), channel="ui", event_id=FULL)
    done = reset_seats(FULL)  # the claimed seat is given up, yating.lin takes hers back
    assert (done["cancelled"], done["registeredAgain"], done["seats"]) == (1, ["yating.lin"], SEEDED)
    given_up = Registration.objects.get(user=claimed, event__public_id=FULL)
    assert given_up.status == RegistrationStatus.CANCELLED

    join(holder)
    free_seat(FULL, holder.username)
    join(first)
    join(second)
    done = reset_seats(FULL)
    # Each declined offer goes to the next in line at once, who then declines in turn.
    assert (done["left"], done["declinedOffers"], done["registeredAgain"]) == (3, 3, ["yating.lin"])
    assert done["seats"] == SEEDED
    assert {status(user) for user in (holder, first, second)} == {WaitlistStatus.DECLINED}

    mine = account("mine")
    join(mine)
    assert free_seat(FULL, mine.username)["offeredTo"] == mine.username


def test_someone_else_first_in_line_fails_the_step_rather_than_the_case():
    person = UserFactory(username="a-real-person")  # not the runner's: reset leaves them alone
    join(person)
    reset_seats(FULL)
    mine = account("mine")
    join(mine)
    with pytest.raises(SeatError, match="went to \\['a-real-person'\\], not eval-mine"):
        free_seat(FULL, mine.username)


def test_free_needs_the_account_waiting_and_a_seeded_seat():
    mine = account("mine")
    with pytest.raises(SeatError, match="not waiting"):
        free_seat(FULL, mine.username)
    with pytest.raises(SeatError, match="no account"):
        free_seat(FULL, "eval-nobody")
    with pytest.raises(SeatError, match="no event"):
        reset_seats("evt-nope")
    assert seats(FULL) == SEEDED


@pytest.fixture
def logging_kept():
    """`main` sets Django up as `python -m evals.seats` must, which configures logging again: the
    console handler would write, for the rest of the run, to this test's captured standard error,
    closed after it (every later record then failing with a printed traceback). Each logger keeps
    the handlers it had."""
    loggers = [logging.root, *(logger for logger in logging.root.manager.loggerDict.values())]
    kept = [
        (logger, logger.handlers[:], logger.filters[:], logger.level, logger.propagate, logger.disabled)
        for logger in loggers
        if isinstance(logger, logging.Logger)
    ]
    yield
    for logger, handlers, filters, level, propagate, disabled in kept:
        logger.handlers[:], logger.filters[:] = handlers, filters
        logger.propagate, logger.disabled = propagate, disabled
        logger.setLevel(level)


def test_the_command_line_prints_one_json_line_or_fails(logging_kept, capsys):
    assert main(["reset", FULL]) == 0
    assert '"seats": {"capacity": 2' in capsys.readouterr().out
    assert main(["free", FULL, "eval-nobody"]) == 1
    assert "no account" in capsys.readouterr().err
    assert main(["reset"]) == 2


def test_serve_answers_each_step_on_its_own_line_and_a_refused_one_with_its_reason():
    """The runner's helper (`serve`): one line in, one line out, in order, and a refused or malformed
    step is an error line rather than the end of the conversation."""
    mine = account("mine")
    join(mine)
    steps = (["free", FULL, "eval-nobody"], {"not": "a list"}, ["free", FULL, mine.username], ["reset", FULL])
    answers = io.StringIO()
    assert serve(io.StringIO("".join(json.dumps(step) + "\n" for step in steps)), answers) == 0
    refused, malformed, freed, reset = (json.loads(line) for line in answers.getvalue().splitlines())
    assert "no account" in refused["error"] and "done" not in refused
    assert "a JSON list of strings" in malformed["error"]
    assert freed["done"]["offeredTo"] == mine.username
    assert reset["done"]["seats"] == SEEDED
