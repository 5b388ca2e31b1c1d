"""The outbox with the real things: a `manage.py db_worker` process and an SMTP server (aiosmtpd) in the
test process. The registration is confirmed at once whatever the mail server does; the e-mail arrives
exactly once, after the server comes back, and after the worker is killed in the middle of sending it.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from aiosmtpd.controller import Controller
from django.test import Client

from events.choices import NotificationStatus, RegistrationStatus
from events.models import Notification, Registration
from tests.factories import EventFactory, UserFactory
from tests.tasks import start_worker

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

#: Quick retries and a short lease, so a test waits seconds where production waits minutes.
WORKER_ENV = {
    "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
    "EMAIL_HOST": "127.0.0.1",
    "EMAIL_TIMEOUT": "2",
    "NOTIFICATION_RETRY_DELAYS": "1,1,1,1,1,1,1,1,1,1",
    "NOTIFICATION_SEND_LEASE": "4",
}


class Inbox:
    """An SMTP server's handler: keeps every message it accepts. `hold_first` makes it sit on the
    first message (the client waits for the answer) until released, then refuse it."""

    def __init__(self, *, hold_first: bool = False) -> None:
        self.accepted: list[tuple[list[str], bytes]] = []
        self.hold_first = hold_first
        self.receiving = threading.Event()
        self.release = threading.Event()

    async def handle_DATA(self, server, session, envelope) -> str:
        if self.hold_first and not self.receiving.is_set():
            self.receiving.set()
            while not self.release.is_set():
                await asyncio.sleep(0.05)
            return "451 Requested action aborted: try again later"
        self.accepted.append((list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def workers() -> Iterator[Callable[..., object]]:
    started = []

    def start(port: int):
        process = start_worker(EMAIL_PORT=str(port), **WORKER_ENV)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=15)


def register(event) -> None:
    """A person registers through the API, as a program or an agent would."""
    user = UserFactory(username="alice", email="alice@example.com")
    client = Client()
    client.force_login(user)
    response = client.post(f"/api/events/{event.public_id}/registration", content_type="application/json")
    assert response.status_code == 201, response.content
    assert Registration.objects.get(user=user).status == RegistrationStatus.CONFIRMED


def notification() -> Notification:
    return Notification.objects.get()


def attempted(**state) -> bool:
    """Whether the outbox row (written by the worker's first attempt) exists and is in `state`."""
    return Notification.objects.filter(**state).exists()


def test_mail_server_down_then_up_one_mail_arrives(workers):
    port = free_port()  # nothing listens here yet: the mail server is down
    event = EventFactory(title="Outbox workshop")
    workers(port)
    register(event)  # confirmed at once, mail server or not

    wait_for(lambda: attempted(attempts__gte=2), "two failed attempts")
    failed = notification()
    assert failed.status in (NotificationStatus.PENDING, NotificationStatus.SENDING)
    assert "Connection refused" in failed.last_error or "Errno 111" in failed.last_error

    inbox = Inbox()
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    try:
        wait_for(lambda: attempted(status=NotificationStatus.SENT), "the mail to be sent")
        time.sleep(3)  # the retry queued before the successful attempt runs, and must send nothing
    finally:
        server.stop()
    [(recipients, content)] = inbox.accepted
    assert recipients == ["alice@example.com"]
    assert b"Outbox workshop" in content or b"Outbox workshop" in content


def test_worker_killed_mid_send_mail_arrives_once_after_restart(workers):
    port = free_port()
    inbox = Inbox(hold_first=True)
    server = Controller(inbox, hostname="127.0.0.1", port=port)
    server.start()
    try:
        event = EventFactory()
        first = workers(port)
        register(event)
        assert inbox.receiving.wait(timeout=30), "the worker never started sending"
        first.send_signal(signal.SIGKILL)  # killed while the server has the message but has not answered
        first.wait(timeout=10)
        inbox.release.set()
        stuck = notification()
        assert (stuck.status, stuck.attempts) == (NotificationStatus.SENDING, 1)
        assert inbox.accepted == []

        workers(port)  # a new worker picks up the attempt queued before the killed one began
        wait_for(lambda: attempted(status=NotificationStatus.SENT), "the mail after the restart")
        time.sleep(2)
    finally:
        server.stop()
    assert len(inbox.accepted) == 1
    assert notification().attempts == 2
