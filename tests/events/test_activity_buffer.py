"""The batched Activity writer the site runs with (`ACTIVITY_FLUSH_SECONDS` > 0): the rows of reads and
refusals wait in the process and are written by its own thread, in one INSERT, when a batch is full or
the oldest has waited the interval, and at a graceful stop; a write's row is in the database with the
write, and the same thread counts it within the interval. The rest of the suite writes and counts each
row at once (tests/conftest.py), so these tests are where the batched path is held to the contract:
every call recorded exactly once, with the time of the call, nothing lost when gunicorn stops
gracefully (and a write's row not even when a process is killed: test_activity_crash.py)."""

import signal
import subprocess
import time
import urllib.request
from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import AuthRequired
from core.visitors import Mode, Visitor
from events import actions, activity
from events.models import Activity, ActivityCount
from tests.factories import EventFactory, UserFactory
from tests.tasks import start_gunicorn

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def buffer(settings, monkeypatch):
    """A writer of this test's own (its thread is started by the first row)."""
    fresh = activity.ActivityBuffer()
    monkeypatch.setattr(activity, "BUFFER", fresh)
    settings.ACTIVITY_FLUSH_SECONDS = 60
    settings.ACTIVITY_BATCH_ROWS = 3
    yield fresh
    fresh.close()


def _eventually(predicate, *, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_rows_wait_until_a_batch_is_full_then_arrive_together_with_their_call_times(buffer):
    before = timezone.now()
    for _ in range(2):
        actions.call("search_events", visitor=Visitor(), channel="api")
    time.sleep(0.3)
    assert Activity.objects.count() == 0 and buffer.waiting() == 2

    actions.call("search_events", visitor=Visitor(), channel="agent")  # the third: the batch is full

    assert _eventually(lambda: Activity.objects.count() == 3)
    rows = list(Activity.objects.order_by("created_at"))
    assert [row.mode for row in rows] == ["api", "api", "agent"]
    assert all(row.action == "search_events" and row.outcome == "OK" for row in rows)
    assert before <= rows[0].created_at <= rows[-1].created_at <= timezone.now()
    assert buffer.waiting() == 0


def test_a_lone_row_is_written_once_the_interval_has_passed(buffer, settings):
    settings.ACTIVITY_FLUSH_SECONDS = 0.2
    settings.ACTIVITY_BATCH_ROWS = 1000
    actions.call("search_events", visitor=Visitor(), channel="api")

    assert _eventually(lambda: Activity.objects.count() == 1)
    time.sleep(0.5)
    assert Activity.objects.count() == 1  # written once


def test_a_refusal_naming_an_event_is_written_with_that_event(buffer):
    event = EventFactory()
    with pytest.raises(AuthRequired):
        actions.call("register_event", visitor=Visitor(), channel="agent", event_id=event.public_id)
    with pytest.raises(AuthRequired):
        actions.call("register_event", visitor=Visitor(), channel="agent", event_id="evt-not-there")

    assert buffer.flush() == 2
    rows = {row.event_id: row for row in Activity.objects.all()}
    assert set(rows) == {event.pk, None}
    assert {row.outcome for row in rows.values()} == {"SIGN_IN_REQUIRED"}


def test_a_row_whose_person_deleted_their_account_meanwhile_is_written_without_them(buffer):
    event = EventFactory()
    leaving, staying = UserFactory(username="leaving"), UserFactory(username="staying")
    for person in (leaving, staying):
        visitor = Visitor(user=person)
        actions.call("get_event_details", visitor=visitor, channel="api", event_id=event.public_id)
    leaving.delete()  # before the batch is written
    assert buffer.flush() == 2
    assert sorted(Activity.objects.values_list("user__username", flat=True), key=str) == [None, "staying"]


def test_a_batch_keeps_each_rows_connected_agent_and_counts_the_agents_apart(buffer):
    for client in ("Claude (claude.ai)", "", "Claude (claude.ai)"):  # the third fills the batch
        caller = actions.Caller(visitor=Visitor(), channel=Mode.MCP, client=client)
        actions.perform(actions.ACTIONS["search_events"], caller, {})

    assert _eventually(lambda: Activity.objects.count() == 3)
    assert sorted(Activity.objects.values_list("client", flat=True)) == ["", *["Claude (claude.ai)"] * 2]
    assert {(row.client, row.calls) for row in ActivityCount.objects.filter(mode="mcp")} == {
        ("Claude (claude.ai)", 2),
        ("", 1),
    }


def test_a_writes_row_is_stored_with_the_write_while_reads_wait_then_the_thread_counts_it(buffer, settings):
    settings.ACTIVITY_FLUSH_SECONDS = 0.3
    settings.ACTIVITY_BATCH_ROWS = 1000
    event, person = EventFactory(), UserFactory()
    actions.call("get_event_details", visitor=Visitor(user=person), channel="ui", event_id=event.public_id)
    actions.call("save_event", visitor=Visitor(user=person), channel="ui", event_id=event.public_id)

    # The write's row committed with the save, before any batch: not counted yet; the read's waits.
    [row] = Activity.objects.all()
    assert (row.action, row.counted, row.user_id, row.event_id) == ("save_event", False, person.pk, event.pk)
    assert buffer.waiting() == 1 and not ActivityCount.objects.exists()

    assert _eventually(lambda: Activity.objects.filter(counted=True).count() == 2)
    assert sorted(ActivityCount.objects.values_list("action", "calls")) == [
        ("get_event_details", 1),
        ("save_event", 1),
    ]
    time.sleep(0.7)  # the thread's later passes find nothing more to count
    assert sum(ActivityCount.objects.values_list("calls", flat=True)) == 2


def _gunicorn(flush_seconds: str) -> tuple[subprocess.Popen, str]:
    return start_gunicorn(
        workers=2,
        SECRET_KEY="test-only",
        ACTIVITY_FLUSH_SECONDS=flush_seconds,
        ACTIVITY_BATCH_ROWS="100000",
    )


def _search(base: str, calls: int) -> None:
    for _ in range(calls):
        with urllib.request.urlopen(f"{base}/api/events?location=taipei", timeout=10) as response:
            assert response.status == 200


@pytest.mark.slow  # starts a process or a server
def test_a_graceful_stop_of_gunicorn_writes_every_waiting_row():
    EventFactory.create_batch(2)
    process, base = _gunicorn(flush_seconds="3600")  # an hour: only the stop can write them
    try:
        _search(base, 40)
        time.sleep(0.5)
        assert Activity.objects.count() == 0  # waiting in the workers
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0

    rows = Activity.objects.filter(action="search_events", mode="api", outcome="OK")
    assert rows.count() == Activity.objects.count() == 40
    # Whichever worker wrote them, they are counted on their day, once.
    assert list(ActivityCount.objects.values_list("mode", "action", "outcome", "calls")) == [
        ("api", "search_events", "OK", 40)
    ]
    assert rows.filter(created_at__lt=timezone.now() - timedelta(minutes=5)).count() == 0


@pytest.mark.slow  # starts a process or a server
def test_gunicorn_workers_write_on_the_interval_without_stopping():
    EventFactory.create_batch(2)
    process, base = _gunicorn(flush_seconds="0.2")
    try:
        _search(base, 25)
        assert _eventually(lambda: Activity.objects.count() == 25, seconds=10)
        time.sleep(0.5)
        assert Activity.objects.count() == 25
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    assert Activity.objects.count() == 25
