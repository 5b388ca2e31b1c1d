"""events.mail.outbox in the test process: retries, the final failure, the in-flight lease, one mail per key.

The mail server is real SMTP when it matters: a port where nothing listens (connection refused), so the
failure is the one production sees.
"""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from core.visitors import Visitor
from events import actions
from events.choices import NotificationKind, NotificationStatus
from events.mail import outbox
from events.mail.messages import build_message
from events.models import Notification
from tests.factories import EventFactory, UserFactory
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def mail_server_down(settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": 2},
        }
    }


def registered(person: Visitor) -> Notification:
    """A registration's confirmation after its first attempt (the worker writes the row then)."""
    event = EventFactory()
    actions.call("register_event", visitor=person, channel="api", event_id=event.public_id)
    [first] = DBTaskResult.objects.filter(task_path="events.mail.outbox.open_notification")
    key, fields = first.args_kwargs["args"]
    outbox.open_and_deliver(key, fields)
    DBTaskResult.objects.filter(pk=first.pk).delete()  # done by hand here, as the worker would
    return Notification.objects.get()


def test_after_the_last_retry_the_mail_is_failed_with_its_error(person, settings, mail_server_down):
    settings.NOTIFICATION_RETRY_DELAYS = [0, 0]  # three attempts, all due at once
    notification = registered(person)  # the first
    run_tasks()  # the other two
    notification.refresh_from_db()
    assert (notification.status, notification.attempts) == (NotificationStatus.FAILED, 3)
    assert "ConnectionRefusedError" in notification.last_error
    assert notification.sent_at is None


def test_a_failed_attempt_queues_the_next_one_after_its_delay(person, settings, mail_server_down):
    settings.NOTIFICATION_RETRY_DELAYS = [60, 300]
    before = timezone.now()
    notification = registered(person)
    run_tasks()  # nothing is due
    notification.refresh_from_db()
    assert (notification.status, notification.attempts) == (NotificationStatus.PENDING, 1)
    [retry] = DBTaskResult.objects.filter(task_path="events.mail.outbox.send_notification", status="READY")
    assert retry.args_kwargs["args"] == [notification.pk]
    assert before + timedelta(seconds=59) < retry.run_after < timezone.now() + timedelta(seconds=61)


def test_the_default_retries_last_more_than_a_day(settings):
    assert sum(settings.NOTIFICATION_RETRY_DELAYS) > 24 * 3600


def test_a_sent_mail_is_never_sent_again(person):
    notification = registered(person)
    assert notification.status == NotificationStatus.SENT
    assert outbox.deliver(notification.pk) == "nothing to do"
    run_tasks()
    assert len(mail.outbox) == 1


def test_an_attempt_in_flight_is_waited_for_then_taken_over(person, settings):
    settings.NOTIFICATION_SEND_LEASE = 120
    notification = registered(person)
    mail.outbox.clear()  # as if that first attempt were still talking to the server
    claimed = timezone.now() - timedelta(seconds=10)
    Notification.objects.filter(pk=notification.pk).update(
        status=NotificationStatus.SENDING, attempts=1, claimed_at=claimed, sent_at=None
    )
    DBTaskResult.objects.filter(task_path="events.mail.outbox.send_notification").delete()  # its retry
    assert outbox.deliver(notification.pk) == "nothing to do"
    assert mail.outbox == []
    [later] = DBTaskResult.objects.filter(
        task_path="events.mail.outbox.send_notification", status="READY"
    ).exclude(
        run_after__year=9999  # what the backend stores for "now"
    )
    assert later.run_after == claimed + timedelta(seconds=120)
    # The lease has passed: the attempt is taken as dead and the mail is sent by the next one.
    Notification.objects.filter(pk=notification.pk).update(claimed_at=claimed - timedelta(seconds=200))
    assert outbox.deliver(notification.pk) == "sent"
    notification.refresh_from_db()
    assert (notification.status, notification.attempts, len(mail.outbox)) == (NotificationStatus.SENT, 2, 1)


def test_one_notification_per_cause_and_recipient(person):
    event = EventFactory()
    other = UserFactory()
    for user in (person.user, person.user, other):
        assert outbox.notify(NotificationKind.WAITLIST_OFFER, user=user, event=event, cause="entry-1")
    run_tasks()
    assert sorted(Notification.objects.values_list("email", flat=True)) == sorted(
        [person.user.email, other.email]
    )
    assert sorted(message.to[0] for message in mail.outbox) == sorted([person.user.email, other.email])


def test_no_notification_for_an_account_without_an_address():
    assert not outbox.notify(
        NotificationKind.WAITLIST_OFFER, user=UserFactory(email=""), event=EventFactory(), cause="entry-1"
    )
    assert not DBTaskResult.objects.filter(task_path="events.mail.outbox.open_notification").exists()


@pytest.mark.django_db(transaction=True)  # the foreign keys are checked at commit, as in the worker
def test_a_mail_whose_person_is_gone_before_the_worker_takes_it_is_dropped():
    user = UserFactory()
    assert outbox.notify(NotificationKind.WAITLIST_OFFER, user=user, event=EventFactory(), cause="entry-1")
    user.delete()
    run_tasks()  # the task ends without error and without a row
    assert (Notification.objects.count(), mail.outbox) == (0, [])


def test_the_message_id_comes_from_the_key_so_a_resend_is_the_same_message(person, settings):
    settings.SITE_URL = "https://events.example.org"
    notification = registered(person)
    one, two = build_message(notification), build_message(notification)
    assert one.extra_headers["Message-ID"] == two.extra_headers["Message-ID"]
    assert one.extra_headers["Message-ID"].endswith("@events.example.org>")


def test_the_mail_is_in_the_language_the_person_used(person):
    from django.utils import translation

    event = EventFactory(title="Workshop")
    with translation.override("zh-hant"):
        actions.call("register_event", visitor=person, channel="ui", event_id=event.public_id)
    run_tasks()
    [message] = mail.outbox
    assert Notification.objects.get().language == "zh-hant"
    assert "報名" in message.subject or "報名" in message.body


def test_a_mail_queued_under_the_tasks_old_path_is_still_sent(person):
    """Task rows queued before the tasks moved into events/mail/outbox.py name events.mail.tasks.…;
    the worker still finds their task there."""
    event = EventFactory()
    actions.call("register_event", visitor=person, channel="api", event_id=event.public_id)
    DBTaskResult.objects.filter(task_path="events.mail.outbox.open_notification").update(
        task_path="events.mail.tasks.open_notification"
    )
    mail.outbox.clear()
    run_tasks()
    assert Notification.objects.get().status == NotificationStatus.SENT
    assert len(mail.outbox) == 1
    assert DBTaskResult.objects.get(task_path="events.mail.tasks.open_notification").status == "SUCCESSFUL"
