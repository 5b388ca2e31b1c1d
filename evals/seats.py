"""Seat steps of a case's setup (`resetSeats`, `freeSeat`, `door`): done on the site's database through
the product's own actions (`events.actions`) and commands, never raw SQL.

A waiting-list case needs what no tool of its page can do: someone else cancelling, so that a seat
frees and is held for the case's account. The runner does not import Django; it runs this module in a
subprocess with the site's environment, `python -m evals.seats serve`, once per run, and sends it each
step as a JSON line (`SiteSeats`). By hand, one step: `python -m evals.seats reset <event id>` or
`python -m evals.seats free <event id> <username>`, which print one JSON line.

- `reset`: the event gets back its seeded seats, whatever earlier cases did. Every account the runner
  signed up (`eval-…`, see `EVAL_ACCOUNT_PREFIX`) leaves the event's waiting list (`leave_waitlist`,
  which declines a held offer) and cancels its registration there (`cancel_registration`); every seeded
  registrant of the event (`events.demo_data.DEMO_REGISTRATIONS`) whose registration is not confirmed
  registers again (`register_event`). Nobody else is touched: on a site with real people waiting, the
  offer of `free` may go to them, and `free` says so.
- `free`: the event's first seeded registrant that holds a seat cancels it (`cancel_registration`),
  which offers the seat to the first person waiting. It fails unless that is `username` (the case's
  fresh account), so a case never runs on someone else's offer.
- `door`: `username` (the case's fresh account) joins the event's door staff, as an organiser adds
  them (`manage.py add_event_staff … --role door`); the event's seeded seats come back (`reset`) and
  its standing check-ins are taken back, so its seeded registrants wait at the door again whatever
  earlier cases (or runs) did there.

Cases run one after another on one site, so these steps make each waiting-list case independent of
the order of the bank: after `reset` the case's account is the only runner account in the line.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import IO

EVAL_ACCOUNT_PREFIX = "eval-"  # the runner signs up `eval-<hex>` (evals/browser.py)
MODE = "ui"  # what they do is what a person does on a page elsewhere


class SeatError(RuntimeError):
    """A seat step could not put the event in the state the case starts from."""


# ---- inside the site's Django (the subprocess) ---------------------------------------------------


def _event(event_id: str):
    from events.models import Event

    event = Event.objects.filter(public_id=event_id).first()
    if event is None:
        raise SeatError(f"no event {event_id!r} in this database (is it the site's, and seeded?)")
    return event


def seats(event_id: str) -> dict:
    """The event's seats now: capacity, confirmed registrations, seats held by offers, people waiting."""
    from events.choices import RegistrationStatus, WaitlistStatus
    from events.models import Registration, WaitlistEntry

    event = _event(event_id)
    entries = WaitlistEntry.objects.filter(event=event)
    return {
        "capacity": event.capacity,
        "confirmed": Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count(),
        "held": entries.filter(status=WaitlistStatus.OFFERED).count(),
        "waiting": entries.filter(status=WaitlistStatus.WAITING).count(),
    }


def seeded_registrants(event_id: str) -> list[str]:
    from events.demo_data import DEMO_REGISTRATIONS

    return [username for username, public_id in DEMO_REGISTRATIONS if public_id == event_id]


def reset_seats(event_id: str) -> dict:
    """The event's seeded seats back (see the module docstring); returns what changed and the seats."""
    from django.contrib.auth import get_user_model

    from core.visitors import Visitor
    from events import actions
    from events.choices import ACTIVE_WAITLIST, RegistrationStatus
    from events.models import Registration, WaitlistEntry

    event = _event(event_id)
    done = {"event": event_id, "left": 0, "declinedOffers": 0, "cancelled": 0, "registeredAgain": []}
    runner_accounts = {"user__username__startswith": EVAL_ACCOUNT_PREFIX}
    # Leaving first, until nobody of ours is in line: a declined offer goes to the next person at once,
    # who may be one of ours as well. Then nobody of ours waits when the cancellations free seats.
    while True:
        entry = (
            WaitlistEntry.objects.select_related("user")
            .filter(event=event, status__in=ACTIVE_WAITLIST, **runner_accounts)
            .order_by("joined_at", "id")
            .first()
        )
        if entry is None:
            break
        left = actions.call(
            "leave_waitlist", visitor=Visitor(user=entry.user), channel=MODE, event_id=event_id
        )
        done["left"] += 1
        done["declinedOffers"] += int(left.declined_offer)
    for registration in Registration.objects.select_related("user").filter(
        event=event, status=RegistrationStatus.CONFIRMED, **runner_accounts
    ):
        actions.call(
            "cancel_registration", visitor=Visitor(user=registration.user), channel=MODE, event_id=event_id
        )
        done["cancelled"] += 1
    User = get_user_model()
    for username in seeded_registrants(event_id):
        user = User.objects.filter(username=username).first()
        if user is None:
            raise SeatError(f"seeded registrant {username!r} is missing (was the site seeded?)")
        confirmed = Registration.objects.filter(user=user, event=event, status=RegistrationStatus.CONFIRMED)
        if not confirmed.exists():
            actions.call("register_event", visitor=Visitor(user=user), channel=MODE, event_id=event_id)
            done["registeredAgain"].append(username)
    done["seats"] = seats(event_id)
    return done


def free_seat(event_id: str, username: str) -> dict:
    """A seeded registrant cancels; the seat must go to `username`, who is waiting."""
    from django.contrib.auth import get_user_model

    from core.visitors import Visitor
    from events import actions
    from events.choices import RegistrationStatus, WaitlistStatus
    from events.models import Registration, WaitlistEntry

    event = _event(event_id)
    account = get_user_model().objects.filter(username=username).first()
    if account is None:
        raise SeatError(f"no account {username!r} in this database (is it the site's?)")
    mine = WaitlistEntry.objects.filter(event=event, user=account).order_by("-id").first()
    if mine is None or mine.status != WaitlistStatus.WAITING:
        raise SeatError(
            f"{username} is not waiting for {event_id} ({mine.status if mine else 'not on the list'}); "
            "a freeSeat case joins the waiting list in its `before` calls"
        )
    holders = [
        registration
        for name in seeded_registrants(event_id)
        for registration in Registration.objects.select_related("user").filter(
            event=event, user__username=name, status=RegistrationStatus.CONFIRMED
        )
    ]
    if not holders:
        raise SeatError(f"no seeded registrant of {event_id} holds a seat to free (resetSeats first)")
    holder = holders[0].user
    actions.call("cancel_registration", visitor=Visitor(user=holder), channel=MODE, event_id=event_id)
    mine.refresh_from_db()
    if mine.status != WaitlistStatus.OFFERED:
        ahead = list(
            WaitlistEntry.objects.filter(event=event, status=WaitlistStatus.OFFERED).values_list(
                "user__username", flat=True
            )
        )
        raise SeatError(
            f"{holder.username} cancelled, but the seat went to {ahead or 'nobody'}, not {username} "
            f"(someone else was ahead in line; status {mine.status})"
        )
    return {
        "event": event_id,
        "cancelledBy": holder.username,
        "offeredTo": username,
        "expiresAt": mine.expires_at.isoformat() if mine.expires_at else None,
        "seats": seats(event_id),
    }


def door(event_id: str, username: str) -> dict:
    """`username` on the event's door staff; the event's seeded seats back and nobody checked in."""
    from django.core.management import call_command
    from django.core.management.base import CommandError
    from django.utils import timezone

    from events.models import CheckIn

    done = reset_seats(event_id)
    try:
        call_command("add_event_staff", event_id, username, role="door", stdout=io.StringIO())
    except CommandError as error:
        raise SeatError(f"{username} could not join the door staff of {event_id}: {error}") from error
    # No action takes back another staff member's check-in, however old (undo is for minutes, by its
    # maker): the step's own, as the organiser's record keeps it (undone, not deleted).
    standing = CheckIn.objects.filter(registration__event=_event(event_id), undone_at__isnull=True)
    return {
        "event": event_id,
        "doorStaff": username,
        "checkInsTakenBack": standing.update(undone_at=timezone.now()),
        "registeredAgain": done["registeredAgain"],
        "seats": done["seats"],
    }


USAGE = (
    "usage: python -m evals.seats reset EVENT_ID | free EVENT_ID USERNAME | door EVENT_ID USERNAME | serve"
)
STEPS = {"reset": (2, reset_seats), "free": (3, free_seat), "door": (3, door)}


def _step(args: list[str]) -> dict:
    """One step, as its command line names it; a wrong one is a SeatError."""
    if not args or args[0] not in STEPS or len(args) != STEPS[args[0]][0]:
        raise SeatError(USAGE)
    return STEPS[args[0]][1](*args[1:])


def serve(requests: IO[str], answers: IO[str]) -> int:
    """Steps one after another in this process, one JSON line each way (`["free", "evt-…", "eval-…"]` →
    `{"done": {...}}` or `{"error": "..."}`), until the runner closes its end: one Django start-up for a
    whole run instead of one per step."""
    for line in requests:
        try:
            args = json.loads(line)
            if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
                raise SeatError("a request is a JSON list of strings")
            answer: dict = {"done": _step(args)}
        except (SeatError, ValueError) as error:
            answer = {"error": f"evals.seats {line.strip()}: {error}"}
        answers.write(json.dumps(answer, ensure_ascii=False) + "\n")
        answers.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["serve"] and (not args or args[0] not in STEPS or len(args) != STEPS[args[0]][0]):
        print(USAGE, file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")  # as manage.py does
    import django

    django.setup()
    if args == ["serve"]:
        # The answers have standard output to themselves: anything else printed goes to standard error.
        answers, sys.stdout = sys.stdout, sys.stderr
        return serve(sys.stdin, answers)
    try:
        done = _step(args)
    except SeatError as error:
        print(f"evals.seats {args[0]}: {error}", file=sys.stderr)
        return 1
    print(json.dumps(done, ensure_ascii=False))
    return 0


# ---- the runner's side ---------------------------------------------------------------------------


class SiteSeats:
    """Runs the seat steps against one site's database: `python -m evals.seats serve` in `env`, started
    at the first step and stopped by `close` (or leaving the `with`).

    The runner's own server passes its environment (settings and SQLite file); with `--base-url` it is
    the runner's environment, so DJANGO_SETTINGS_MODULE / DATABASE_URL must name that site's database.
    """

    def __init__(self, env: Mapping[str, str] | None = None, python: str | None = None) -> None:
        self.env = dict(env if env is not None else os.environ)
        self.python = python or sys.executable
        self._process: subprocess.Popen[str] | None = None
        self._errors: IO[bytes] | None = None

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None:
            from harness.revision import PROJECT_DIR

            env = dict(self.env)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_DIR), env.get("PYTHONPATH")]))
            # A file, so a talkative step never fills a pipe; closed by `close`.
            self._errors = tempfile.TemporaryFile()  # noqa: SIM115 (kept open across steps)
            self._process = subprocess.Popen(
                [self.python, "-m", "evals.seats", "serve"],
                cwd=PROJECT_DIR,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._errors,
                text=True,
                bufsize=1,
            )
        return self._process

    def _run(self, *args: str) -> dict:
        process = self._started()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(list(args)) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
        except OSError:
            line = ""
        if not line:
            raise SeatError(f"seats {' '.join(args)} failed: {self._last_error()}")
        answer = json.loads(line)
        if "error" in answer:
            raise SeatError(f"seats {' '.join(args)} failed: {answer['error']}")
        return answer["done"]

    def _last_error(self) -> str:
        """The helper's last line on standard error (it stopped: a traceback's last line says why)."""
        if self._errors is None:
            return "no output"
        self._errors.seek(0)
        lines = self._errors.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    def reset(self, event_id: str) -> dict:
        return self._run("reset", event_id)

    def free(self, event_id: str, username: str) -> dict:
        return self._run("free", event_id, username)

    def door(self, event_id: str, username: str) -> dict:
        return self._run("door", event_id, username)

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            assert process.stdin is not None
            process.stdin.close()  # its end of the conversation: the helper returns
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._errors is not None:
            self._errors.close()
            self._errors = None

    def __enter__(self) -> SiteSeats:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


if __name__ == "__main__":
    sys.exit(main())
