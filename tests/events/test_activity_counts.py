"""The day counts the agent-readiness dashboard reads (`ActivityCount`) always equal counting the
counted Activity rows: a batch's are written with the rows, in their transaction, on the site's days,
apart for each connected agent, by the immediate writer the tests use, by the batched one the site
runs, by two processes at once, and after a recount made beside a writer. A write's row, committed
with the write and not counted there, is counted once by a later pass (two at once take different
rows), or by a recount, which does not wait for a pass in flight and does not count its rows twice."""

import functools
import importlib
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from core.errors import AuthRequired
from core.visitors import Mode, Visitor
from events import actions, activity
from events.models import Activity, ActivityCount
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def counted() -> dict[tuple, int]:
    return {
        (row.day, row.mode, row.action, row.outcome, row.client): row.calls
        for row in ActivityCount.objects.all()
        if row.calls  # a key whose rows were all counted away is no count
    }


def counted_from_rows() -> dict[tuple, int]:
    grouped = (
        Activity.objects.annotate(day=TruncDate("created_at", tzinfo=timezone.get_default_timezone()))
        .values_list("day", "mode", "action", "outcome", "client")
        .annotate(n=Count("*"))
        .order_by()
    )
    return {(day, mode, action, outcome, client): n for day, mode, action, outcome, client, n in grouped}


def in_thread(body: Callable[[], None], failures: list[Exception]) -> threading.Thread:
    """A thread (not started) that runs `body` on its own connection, closes that connection when done,
    and keeps what `body` raised for the test to assert on."""

    def run() -> None:
        try:
            body()
        except Exception as error:
            failures.append(error)
        finally:
            connection.close()

    return threading.Thread(target=run)


def test_every_use_case_call_is_counted_on_its_day_by_mode_action_and_outcome():
    event = EventFactory()
    for mode in ("ui", "agent", "agent", "mcp"):
        actions.call("search_events", visitor=Visitor(), channel=mode)
    with pytest.raises(AuthRequired):
        actions.call("register_event", visitor=Visitor(), channel="agent", event_id=event.public_id)

    today = timezone.localdate(timezone=timezone.get_default_timezone())
    assert counted() == {
        (today, "ui", "search_events", "OK", ""): 1,
        (today, "agent", "search_events", "OK", ""): 2,
        (today, "mcp", "search_events", "OK", ""): 1,
        (today, "agent", "register_event", "SIGN_IN_REQUIRED", ""): 1,
    }
    assert counted() == counted_from_rows()


CLAUDE = "Claude (claude.ai)"


def mcp_call(name: str, *, client: str = "", visitor: Visitor | None = None, **data) -> actions.Performed:
    """A tool call over /mcp as events/agent/mcp.py makes it, by the connected agent `client`."""
    caller = actions.Caller(visitor=visitor or Visitor(), channel=Mode.MCP, client=client)
    return actions.perform(actions.ACTIONS[name], caller, data)


def test_an_mcp_call_by_a_connected_agent_is_recorded_and_counted_with_that_agent():
    event = EventFactory()
    for _ in range(2):
        mcp_call("search_events", client=CLAUDE)
    mcp_call("search_events")  # a personal access token, or nobody signed in
    refused = mcp_call("register_event", client=CLAUDE, event_id=event.public_id)
    assert isinstance(refused.error, AuthRequired)

    assert sorted(Activity.objects.values_list("action", "client")) == [
        ("register_event", CLAUDE),
        ("search_events", ""),
        ("search_events", CLAUDE),
        ("search_events", CLAUDE),
    ]
    [registration] = Activity.objects.filter(action="register_event")
    assert registration.event_id == event.pk and registration.mode == "mcp"
    today = timezone.localdate(timezone=timezone.get_default_timezone())
    assert (
        counted()
        == counted_from_rows()
        == {
            (today, "mcp", "search_events", "OK", CLAUDE): 2,
            (today, "mcp", "search_events", "OK", ""): 1,
            (today, "mcp", "register_event", "SIGN_IN_REQUIRED", CLAUDE): 1,
        }
    )

    as_written = counted()
    activity.recount()
    assert counted() == as_written  # the recount keeps the agents apart too


def test_a_long_client_label_is_cut_to_the_column_and_still_counted_as_its_row():
    mcp_call("search_events", client="A" * 150)

    [row] = Activity.objects.all()
    assert row.client == "A" * activity.CLIENT_LENGTH
    assert counted() == counted_from_rows() and sum(counted().values()) == 1


def test_days_are_the_sites_whatever_time_zone_is_active():
    # Asia/Taipei is UTC+8: 15:59:59 UTC is the 1st's last second there, 16:00 UTC the 2nd's first.
    before, after = datetime(2026, 11, 1, 15, 59, 59, tzinfo=UTC), datetime(2026, 11, 1, 16, tzinfo=UTC)
    with timezone.override("UTC"):
        activity.write_rows([Activity(action="search_events", mode="ui", outcome="OK", created_at=before)])
        activity.write_rows([Activity(action="search_events", mode="ui", outcome="OK", created_at=after)])

    assert sorted(day.isoformat() for day, *_ in counted()) == ["2026-11-01", "2026-11-02"]
    assert counted() == counted_from_rows()


def test_a_batch_adds_to_the_counts_already_there():
    rows = [Activity(action="save_event", mode="agent", outcome="OK") for _ in range(3)]
    activity.write_rows(rows[:1])
    activity.write_rows([*rows[1:], Activity(action="save_event", mode="agent", outcome="ALREADY_SAVED")])

    day = timezone.localdate(timezone=timezone.get_default_timezone())
    assert counted() == {
        (day, "agent", "save_event", "OK", ""): 3,
        (day, "agent", "save_event", "ALREADY_SAVED", ""): 1,
    }


@pytest.mark.django_db(transaction=True)  # the writer drops its connection after a database error
def test_a_batch_whose_count_fails_writes_no_row_and_waits_for_the_next_try(monkeypatch):
    buffer = activity.ActivityBuffer()
    buffer.add(Activity(action="search_events", mode="api", outcome="OK"), public_id=None)
    real_count = activity._count

    def fail(rows):
        raise DatabaseError("the counts' table is away")  # stands in for a failed upsert

    monkeypatch.setattr(activity, "_count", fail)
    assert buffer.flush() == 0
    assert Activity.objects.count() == 0 and buffer.waiting() == 1  # no row without its count

    monkeypatch.setattr(activity, "_count", real_count)
    assert buffer.flush() == 1
    assert Activity.objects.count() == 1 and sum(counted().values()) == 1


def test_recount_counts_rows_written_around_the_counts_and_gives_the_same_counts_as_the_writes():
    for mode in ("ui", "api", "agent"):
        actions.call("search_events", visitor=Visitor(), channel=mode)
    as_written = counted()
    Activity.objects.bulk_create([Activity(action="list_saved", mode="ui", outcome="OK")] * 2)  # a bulk load
    assert counted() == as_written

    activity.recount()

    day = timezone.localdate(timezone=timezone.get_default_timezone())
    assert counted() == {**as_written, (day, "ui", "list_saved", "OK", ""): 2} == counted_from_rows()


def test_the_recount_command_counts_a_bulk_load(capsys):
    Activity.objects.bulk_create(
        [Activity(action="get_event_details", mode=mode, outcome="OK") for mode in ("ui", "ui", "api")]
    )
    call_command("recount_activity")

    assert capsys.readouterr().out.strip() == "2 day counts."
    assert counted() == counted_from_rows() and sum(counted().values()) == 3


def test_the_migration_counts_the_rows_written_before_it():
    for mode in ("ui", "mcp"):
        actions.call("search_events", visitor=Visitor(), channel=mode)
    expected = counted()
    ActivityCount.objects.all().delete()

    migration = importlib.import_module("events.migrations.0007_activity_counts")
    migration.count_the_rows(apps, connection.schema_editor)

    assert counted() == expected


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_writers_at_once_on_the_same_days_lose_nothing_and_do_not_deadlock():
    if connection.vendor != "postgresql":
        pytest.skip("row locks and concurrent transactions are PostgreSQL's; SQLite writes one at a time")
    days = [datetime(2026, 11, d, 4, tzinfo=UTC) for d in range(1, 6)]
    barrier, failures = threading.Barrier(2), []

    def writer(order: list[datetime]) -> None:
        barrier.wait()
        for _ in range(20):
            activity.write_rows(
                [
                    Activity(action="search_events", mode=mode, outcome="OK", created_at=when)
                    for when in order
                    for mode in ("ui", "agent")
                ]
            )

    threads = [in_thread(functools.partial(writer, order), failures) for order in (days, days[::-1])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not failures
    assert Activity.objects.count() == 2 * 20 * 5 * 2
    assert set(counted().values()) == {40} and counted() == counted_from_rows()


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_recount_beside_the_site_waits_for_the_write_in_flight_and_counts_its_rows():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one write lock, which the recount's first statement takes")
    activity.write_rows([Activity(action="search_events", mode="ui", outcome="OK") for _ in range(3)])
    written, commit, failures = threading.Event(), threading.Event(), []

    def writer() -> None:  # a batch of a key the counts do not hold yet, committed when told
        try:
            with transaction.atomic():
                activity.write_rows([Activity(action="save_event", mode="agent", outcome="OK")])
                written.set()
                commit.wait(timeout=30)
        finally:
            written.set()  # a failed write must not keep the test waiting

    threads = [in_thread(writer, failures), in_thread(activity.recount, failures)]
    threads[0].start()
    written.wait(timeout=30)
    threads[1].start()
    waiting = False
    for _ in range(300):  # until the recount waits for the writer's transaction, or finished without it
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND query LIKE %s",
                ["LOCK TABLE%"],
            )
            waiting = cursor.fetchone()[0] == 1
        if waiting or not threads[1].is_alive():
            break
        time.sleep(0.02)
    commit.set()
    for thread in threads:
        thread.join(timeout=60)

    assert waiting, "the recount did not wait for the write in flight"
    assert not failures
    day = timezone.localdate(timezone=timezone.get_default_timezone())
    assert (
        counted()
        == counted_from_rows()
        == {
            (day, "ui", "search_events", "OK", ""): 3,
            (day, "agent", "save_event", "OK", ""): 1,
        }
    )


def _waiting(n: int, **fields) -> None:
    """`n` rows as writes leave them: committed in their write's transaction, not counted yet."""
    fields = {"action": "register_event", "mode": "mcp", "outcome": "OK", **fields}
    Activity.objects.bulk_create([Activity(counted=False, **fields) for _ in range(n)])


def test_a_writes_row_waits_uncounted_until_a_counting_pass_which_counts_it_once():
    _waiting(3)
    assert counted() == {}

    assert activity.count_waiting(batch=2) == 3  # two passes' worth, all of them
    assert activity.count_waiting() == 0
    assert counted() == counted_from_rows() and sum(counted().values()) == 3


def test_recount_counts_the_rows_still_waiting_too_and_they_are_not_counted_again():
    activity.write_rows([Activity(action="search_events", mode="ui", outcome="OK")])
    _waiting(2)

    activity.recount()

    assert counted() == counted_from_rows() and sum(counted().values()) == 3
    assert activity.count_waiting() == 0 and sum(counted().values()) == 3


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_processes_counting_at_once_count_each_row_once_and_do_not_wait_for_each_other():
    if connection.vendor != "postgresql":
        pytest.skip("row locks and concurrent transactions are PostgreSQL's; SQLite writes one at a time")
    days = [datetime(2026, 11, d, 4, tzinfo=UTC) for d in range(1, 4)]
    for when in days:
        _waiting(400, created_at=when)
    barrier, failures, done = threading.Barrier(2), [], []

    def counter() -> None:
        barrier.wait()
        done.append(activity.count_waiting(batch=50))

    threads = [in_thread(counter, failures) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not failures and sum(done) == 1200
    assert not Activity.objects.filter(counted=False).exists()
    assert set(counted().values()) == {400} and counted() == counted_from_rows()


@pytest.mark.postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_recount_beside_a_counting_pass_in_flight_neither_waits_for_it_nor_counts_its_rows_twice(
    monkeypatch,
):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has one write lock: a recount and a counting pass run one after the other")
    activity.write_rows([Activity(action="search_events", mode="ui", outcome="OK") for _ in range(2)])
    _waiting(3)
    marked, go_on, failures = threading.Event(), threading.Event(), []
    real_count = activity._count

    def count_when_told(keys) -> None:  # the pass has marked its rows counted, not yet added them
        marked.set()
        go_on.wait(timeout=30)
        real_count(keys)

    monkeypatch.setattr(activity, "_count", count_when_told)
    counting = in_thread(activity.count_waiting, failures)
    counting.start()
    assert marked.wait(timeout=30)
    _waiting(1, action="save_event")  # a write committed meanwhile: the recount counts it

    activity.recount()  # does not wait for the pass: its rows are skipped, and the pass adds them after

    assert counting.is_alive(), "the recount waited for the counting pass"
    go_on.set()
    counting.join(timeout=60)
    assert not failures
    day = timezone.localdate(timezone=timezone.get_default_timezone())
    assert (
        counted()
        == counted_from_rows()
        == {
            (day, "ui", "search_events", "OK", ""): 2,
            (day, "mcp", "register_event", "OK", ""): 3,
            (day, "mcp", "save_event", "OK", ""): 1,
        }
    )
