"""Reminders with the real things (tests/events/test_worker.py's helpers): a `manage.py db_worker`
process running the periodic `send_reminders` every second and an SMTP server in the test process. The
reminder arrives exactly once, also when the worker is killed in the middle of sending it and another
one takes over; a reminder whose registration is cancelled while the mail server is down never goes.
"""

from __future__ import annotations

import re
import signal
import time
from datetime import timedelta

import pytest
from aiosmtpd.controller import Controller
from django.test import Client
from django.utils import timezone

from events.choices import NotificationKind, NotificationStatus
from events.models import Notification
from events.services.door import new_ticket
from events.tasks import schedule_reminders
from tests.events import test_worker
from tests.events.test_worker import Inbox, free_port, wait_for
from tests.factories import EventFactory, RegistrationFactory, UserFactory

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

workers = test_worker.workers  # the fixture: start worker processes, stopped after the test


@pytest.fixture(autouse=True)
def frequent_runs(monkeypatch):
    """The workers' reminder run comes round every 1.2 seconds (each run queues the next itself)."""
    monkeypatch.setenv("REMINDER_SWEEP_MINUTES", "0.02")


def registered_soon():
    """Alice, registered (without a confirmation mail: the reminder is the only one) for an event that
    starts in two hours, so its reminder is due."""
    person = UserFactory(username="alice", email="alice@example.com")
    event = EventFactory(title="Worker reminder night", starts_at=timezone.now() + timedelta(hours=2))
    RegistrationFactory(user=person, event=event, **new_ticket(now=timezone.now()))
    return person, event


def reminder() -> Notification:
    return Notification.objects.get(kind=NotificationKind.REMINDER)


def reminder_is(**state) -> bool:
    return Notification.objects.filter(kind=NotificationKind.REMINDER, **state).exists()


def test_worker_killed_mid_send_the_reminder_arrives_once_after_restart(workers):
    port = free_port()
    inbox = Inbox(hold_first=True)
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    try:
        registered_soon()
        schedule_reminders()  # what `migrate` queues
        first = workers(port)
        assert inbox.receiving.wait(timeout=30), "the worker never started sending the reminder"
        first.send_signal(signal.SIGKILL)  # killed while the server has the message but has not answered
        first.wait(timeout=10)
        inbox.release.set()
        stuck = reminder()
        assert (stuck.status, stuck.attempts) == (NotificationStatus.SENDING, 1)
        assert inbox.accepted == []

        workers(port)  # takes over the attempt queued before the killed one began
        wait_for(lambda: reminder_is(status=NotificationStatus.SENT), "the reminder after the restart")
        time.sleep(4)  # several more runs of the periodic task: none queues another
    finally:
        server.stop()
    [(recipients, content)] = inbox.accepted
    assert recipients == ["alice@example.com"]
    # On one line as they are (RFC 2369, 8058): a URL in angle brackets, no encoded words.
    assert re.search(
        rb"\r\nList-Unsubscribe: <http://[^>\s]+/accounts/reminders/unsubscribe/[^>\s]+/>\r\n", content
    )
    assert b"\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n" in content
    assert reminder().attempts == 2
    assert Notification.objects.filter(kind=NotificationKind.REMINDER).count() == 1


def test_cancelled_while_the_mail_server_is_down_the_reminder_never_goes(workers):
    port = free_port()  # nothing listens here yet: the mail server is down
    person, event = registered_soon()
    schedule_reminders()
    workers(port)
    wait_for(lambda: reminder_is(attempts__gte=1, status=NotificationStatus.PENDING), "a failed attempt")

    client = Client()
    client.force_login(person)
    response = client.delete(f"/api/events/{event.public_id}/registration")
    assert response.status_code == 200, response.content

    inbox = Inbox()
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    try:
        wait_for(lambda: reminder_is(status=NotificationStatus.SKIPPED), "the reminder to be given up")
        time.sleep(3)  # retries and periodic runs go on: nothing is sent
    finally:
        server.stop()
    assert inbox.accepted == []
