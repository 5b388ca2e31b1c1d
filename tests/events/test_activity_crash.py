"""The audit trail survives a crash. A process that registers someone through `perform` and is then
killed without warning (SIGKILL, as a worker timeout or the OOM killer does), with its batch interval an
hour so nothing else could have written for it, leaves the registration's Activity row in the database:
it committed with the registration. The row is counted later, exactly once, by the next process that
records anything (as the worker gunicorn starts in its place would), and a process killed in the middle
of counting leaves its rows to be counted by another, once. Run on SQLite and on PostgreSQL (the
DATABASE_URL the tests run on); the processes share the test database.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from events import activity
from events.choices import RegistrationStatus
from events.models import Activity, ActivityCount, Registration
from tests.factories import EventFactory, UserFactory
from tests.tasks import database_url

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

#: A person registers through `perform` (channel mcp, as an agent for them), after a read; then the
#: process waits to be killed. Its batch interval is an hour: only the write's own transaction can have
#: stored anything.
REGISTER = """
import time
from django.contrib.auth import get_user_model
from core.visitors import Visitor
from events import actions
visitor = Visitor(user=get_user_model().objects.get(pk={person}))
actions.call("get_event_details", visitor=visitor, channel="mcp", event_id="{event}")
actions.call("register_event", visitor=visitor, channel="mcp", event_id="{event}")
print("registered", flush=True)
time.sleep(600)
"""

#: A counting pass that stops after marking its rows counted, before adding them to their counts,
#: and waits there to be killed.
COUNT_THEN_HANG = """
import time
from events import activity
def hang(counted):
    print("counting", flush=True)
    time.sleep(600)
activity._count = hang
activity.count_waiting()
"""

#: Another process that records one read and ends normally.
ONE_READ = """
from core.visitors import Visitor
from events import actions
actions.call("search_events", visitor=Visitor(), channel="api")
"""


def _shell(code: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", code],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DATABASE_URL": database_url(), "ACTIVITY_FLUSH_SECONDS": "3600"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen, line: str, *, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            said = process.stdout.readline()
            if said.strip() == line:
                return
            if not said and process.poll() is not None:
                break
    process.kill()
    raise AssertionError(f"the process never said {line!r}: {process.stderr.read()[-3000:]}")


def _kill(process: subprocess.Popen) -> None:
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL


def _counts() -> dict[tuple, int]:
    return {
        (row.day, row.mode, row.action, row.outcome, row.client): row.calls
        for row in ActivityCount.objects.all()
        if row.calls
    }


def _counted_from_rows() -> dict[tuple, int]:
    grouped = (
        Activity.objects.annotate(day=TruncDate("created_at", tzinfo=timezone.get_default_timezone()))
        .values_list("day", "mode", "action", "outcome", "client")
        .annotate(n=Count("*"))
        .order_by()
    )
    return {tuple(key): n for *key, n in grouped}


def test_a_process_killed_after_a_write_keeps_its_row_which_the_next_process_counts_once():
    person, event = UserFactory(username="ada"), EventFactory(capacity=10)

    process = _shell(REGISTER.format(person=person.pk, event=event.public_id))
    _wait_for_line(process, "registered")
    _kill(process)

    assert Registration.objects.get(user=person, event=event).status == RegistrationStatus.CONFIRMED
    [row] = Activity.objects.all()  # the read's row waited in the process, and died with it
    assert (row.action, row.mode, row.outcome) == ("register_event", "mcp", "OK")
    assert (row.user_id, row.event_id, row.counted) == (person.pk, event.pk, False)
    assert _counts() == {}

    # Any process that records something counts what waits: here one read, then a normal exit.
    reader = _shell(ONE_READ)
    assert reader.wait(timeout=60) == 0, reader.stderr.read()

    assert not Activity.objects.filter(counted=False).exists()
    day = timezone.localdate(timezone=timezone.get_default_timezone())
    assert (
        _counts()
        == _counted_from_rows()
        == {(day, "mcp", "register_event", "OK", ""): 1, (day, "api", "search_events", "OK", ""): 1}
    )
    assert activity.count_waiting() == 0 and _counts() == _counted_from_rows()  # once


def test_a_process_killed_while_counting_leaves_its_rows_to_be_counted_once_by_another():
    rows = [Activity(action="save_event", mode="agent", outcome="OK", counted=False) for _ in range(3)]
    Activity.objects.bulk_create(rows)  # three writes' rows, committed and waiting to be counted

    process = _shell(COUNT_THEN_HANG)
    _wait_for_line(process, "counting")  # it has marked them counted, in a transaction not committed
    _kill(process)

    assert Activity.objects.filter(counted=False).count() == 3 and _counts() == {}
    counted = 0
    deadline = time.monotonic() + 30
    while counted < 3 and time.monotonic() < deadline:  # until the database has let the dead one go
        counted += activity.count_waiting()
        time.sleep(0.1)
    assert counted == 3
    assert activity.count_waiting() == 0
    day = timezone.localdate(timezone=timezone.get_default_timezone())
    assert _counts() == _counted_from_rows() == {(day, "agent", "save_event", "OK", ""): 3}
