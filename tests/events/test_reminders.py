"""Reminders: one e-mail REMINDER_HOURS before each event a person is registered for, queued by the
periodic `send_reminders` task through the outbox, exactly once per registration and activation, never
after a cancellation (of the registration or of the event) nor to a person who turned reminders off,
in the person's last language, with a one-click unsubscribe (RFC 8058) and a setting on My events."""

from __future__ import annotations

import email.policy
import logging
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation
from django_tasks_db.models import DBTaskResult

from accounts.models import Preferences
from core.errors import DomainError
from core.visitors import Mode, Visitor
from events import actions
from events.choices import EventStatus, NotificationKind, NotificationStatus
from events.mail.messages import reminders_on, unsubscribe_token, unsubscribed_user_id
from events.models import Activity, Event, Notification
from events.tasks import queue_due_reminders, send_reminders
from tests.factories import EventFactory, RegistrationFactory, UserFactory
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def setup(settings):
    settings.REMINDER_HOURS = 24
    settings.REMINDER_SWEEP_MINUTES = 5
    settings.SITE_URL = "https://events.example"
    DBTaskResult.objects.all().delete()  # no periodic run queued by migrate: each test runs its own


@pytest.fixture
def soon(db) -> Event:
    """An event starting in 30 hours: its reminder is due 6 hours from now."""
    return EventFactory(
        public_id="evt-reminded", title="Reminder night", starts_at=timezone.now() + timedelta(hours=30)
    )


def register(user, event: Event, *, language: str = "en") -> None:
    """`user` registers (in `language`); the confirmation is sent and forgotten."""
    with translation.override(language):
        actions.call("register_event", visitor=Visitor(user=user), channel=Mode.UI, event_id=event.public_id)
    run_tasks()
    mail.outbox[:] = [message for message in mail.outbox if message in reminders()]


def cancel(user, event: Event) -> None:
    actions.call("cancel_registration", visitor=Visitor(user=user), channel=Mode.UI, event_id=event.public_id)


def due(event: Event):
    """The clock 23 hours before `event` starts: its reminders are due."""
    return time_machine.travel(event.starts_at - timedelta(hours=23), tick=False)


def reminders() -> list:
    return [message for message in mail.outbox if message.extra_headers.get("List-Unsubscribe")]


def reminder_row() -> Notification:
    return Notification.objects.get(kind=NotificationKind.REMINDER)


def sweep() -> None:
    """One run of the periodic task, as the worker makes it."""
    send_reminders.enqueue()
    run_tasks()


def test_one_reminder_however_often_the_sweep_runs(user, soon):
    register(user, soon)
    sweep()  # 30 hours ahead: not due yet
    assert reminders() == []

    with due(soon):
        sweep()
        sweep()
    with time_machine.travel(soon.starts_at - timedelta(hours=22), tick=False):
        run_tasks()  # the runs each sweep queued for later
        sweep()

    [message] = reminders()
    assert message.to == [user.email]
    assert reminder_row().status == NotificationStatus.SENT
    assert Notification.objects.filter(kind=NotificationKind.REMINDER).count() == 1


def test_each_run_queues_the_next_one_sweep_minutes_later(settings):
    settings.REMINDER_SWEEP_MINUTES = 7
    sweep()
    [following] = DBTaskResult.objects.filter(task_path=send_reminders.module_path, status="READY")
    assert timedelta(minutes=6, seconds=59) < following.run_after - timezone.now() <= timedelta(minutes=7)


def test_only_confirmed_registrations_of_published_events_starting_within_the_hours(user, other_user, soon):
    later = EventFactory(starts_at=soon.starts_at + timedelta(hours=2))  # 25 hours ahead then
    started = EventFactory(starts_at=timezone.now() + timedelta(hours=6, minutes=30))
    cancelled_by_person = EventFactory(starts_at=soon.starts_at)
    for event in (soon, later, started, cancelled_by_person):
        register(user, event)
    cancel(user, cancelled_by_person)
    register(other_user, soon)
    with due(soon):  # `started` began 30 minutes ago
        queued = queue_due_reminders(now=timezone.now())
        run_tasks()
    assert queued == 2
    assert sorted(message.to[0] for message in reminders()) == sorted([user.email, other_user.email])
    assert {row.event_id for row in Notification.objects.filter(kind=NotificationKind.REMINDER)} == {soon.pk}


def test_each_event_s_reminders_are_one_row_of_the_site_acting_on_its_own(user, other_user, soon):
    """The run performs `send_reminders` as the declared system actor, once per event with reminders
    due (an Activity row each, channel `system`); a run with nothing due writes no row."""
    register(user, soon)
    register(other_user, soon)
    with due(soon):
        queue_due_reminders(now=timezone.now())
        run_tasks()  # the reminders' rows are written by the outbox
        queue_due_reminders(now=timezone.now())  # nothing new: no row
    [row] = Activity.objects.filter(action="send_reminders")
    assert (row.mode, row.outcome, row.client, row.event_id, row.user_id) == (
        "system",
        "OK",
        "send_reminders",
        soon.pk,
        None,
    )


def test_only_the_site_may_send_reminders(user, soon):
    with pytest.raises(DomainError):
        actions.call("send_reminders", visitor=Visitor(user=user), channel=Mode.API, event_id=soon.public_id)


def test_no_reminder_when_the_person_cancels_before_it_goes_out(user, soon):
    register(user, soon)
    with due(soon):
        queue_due_reminders(now=timezone.now())  # queued, not sent yet
        cancel(user, soon)
        run_tasks()
        sweep()  # and a later run queues none
    assert reminders() == []
    skipped = reminder_row()
    assert (skipped.status, skipped.attempts) == (NotificationStatus.SKIPPED, 0)


def test_no_reminder_when_the_event_is_cancelled_before_it_goes_out(user, soon, organiser):
    register(user, soon)
    with due(soon):
        queue_due_reminders(now=timezone.now())
        actions.call("cancel_event", visitor=organiser, channel=Mode.ADMIN, event_id=soon.public_id)
        run_tasks()
        sweep()
    assert reminders() == []
    assert len(mail.outbox) == 1  # the cancellation's own mail, not the reminder
    assert Notification.objects.get(kind=NotificationKind.EVENT_CANCELLED).status == NotificationStatus.SENT
    assert reminder_row().status == NotificationStatus.SKIPPED


def test_the_event_alone_being_cancelled_also_stops_the_reminder(user, soon):
    """Checked at send time on its own, whatever becomes of the registration."""
    register(user, soon)
    with due(soon):
        queue_due_reminders(now=timezone.now())
        Event.objects.filter(pk=soon.pk).update(status=EventStatus.CANCELLED)
        run_tasks()
    assert reminders() == []
    assert reminder_row().status == NotificationStatus.SKIPPED


def test_no_reminder_for_a_person_who_turned_them_off(user, other_user, soon):
    register(user, soon)
    register(other_user, soon)
    Preferences.set_reminders(user, on=False)
    with due(soon):
        queue_due_reminders(now=timezone.now())
        Preferences.set_reminders(other_user, on=False)  # after it was queued: not sent either
        run_tasks()
    assert reminders() == []
    assert list(
        Notification.objects.filter(kind=NotificationKind.REMINDER).values_list("user", "status")
    ) == [(other_user.pk, NotificationStatus.SKIPPED)]


def test_registering_again_after_cancelling_gets_one_reminder_for_the_new_registration(user, soon):
    register(user, soon)
    with due(soon):
        queue_due_reminders(now=timezone.now())
    with time_machine.travel(soon.starts_at - timedelta(hours=22, minutes=59), tick=False):
        cancel(user, soon)
        register(user, soon)  # the first activation's reminder is never sent ...
    assert reminders() == [] and reminder_row().status == NotificationStatus.SKIPPED
    with time_machine.travel(soon.starts_at - timedelta(hours=22), tick=False):
        sweep()  # ... the new one's is
        sweep()
    [message] = reminders()
    assert message.to == [user.email]
    statuses = Notification.objects.filter(kind=NotificationKind.REMINDER).values_list("status", flat=True)
    assert sorted(statuses) == [NotificationStatus.SENT, NotificationStatus.SKIPPED]


def test_the_reminder_has_the_ticket_links_and_one_click_unsubscribe_headers(user, soon):
    register(user, soon)
    with due(soon):
        sweep()
    [message] = reminders()
    headers = message.message()
    url = headers["List-Unsubscribe"].removeprefix("<").removesuffix(">")
    prefix = "https://events.example/accounts/reminders/unsubscribe/"
    assert url.startswith(prefix) and unsubscribed_user_id(url.removeprefix(prefix).rstrip("/")) == user.pk
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    sent = message.message(policy=email.policy.SMTP).as_bytes()  # as the SMTP backend writes it
    assert f"\r\nList-Unsubscribe: <{url}>\r\n".encode() in sent  # one line, no encoded words
    assert message.subject == "Reminder: Reminder night"
    assert "https://events.example/events/evt-reminded/" in message.body  # where the QR code is shown
    assert "https://events.example/me/" in message.body
    assert url in message.body
    assert soon.title in message.body


def test_a_post_to_the_unsubscribe_url_turns_reminders_off_and_a_get_does_not(user):
    client = Client(enforce_csrf_checks=True, headers={"Accept-Language": "en"})  # no sign-in, no CSRF token
    url = f"/accounts/reminders/unsubscribe/{unsubscribe_token(user)}/"

    page = client.get(url)  # what a link scanner does
    assert page.status_code == 200
    assert b"Turn reminders off" in page.content and b'method="post"' in page.content
    assert reminders_on(user)

    answer = client.post(url, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded")
    assert answer.status_code == 200
    user.refresh_from_db()
    assert not reminders_on(user)
    assert b"Your reminders are off already" in client.get(url).content


@pytest.mark.parametrize("token", ["nonsense", "1:forged-signature"])
def test_an_unsigned_or_forged_token_changes_nothing(user, token):
    response = Client(enforce_csrf_checks=True).post(f"/accounts/reminders/unsubscribe/{token}/")
    assert response.status_code == 404
    assert not Preferences.objects.exists()


def test_a_token_names_its_person_only(user, other_user):
    Client().post(f"/accounts/reminders/unsubscribe/{unsubscribe_token(other_user)}/")
    assert reminders_on(user)
    assert not Preferences.objects.get(user=other_user).reminders


def test_the_my_events_checkbox_turns_reminders_off_and_on(user):
    client = Client(headers={"Accept-Language": "en"})
    client.force_login(user)
    checked = '<input type="checkbox" name="reminders" checked>'
    unchecked = '<input type="checkbox" name="reminders">'
    page = client.get("/me/").content.decode()
    assert checked in page and 'hx-post="/accounts/reminders/"' in page  # the form is in the page

    form = client.get("/accounts/reminders/", headers={"HX-Request": "true"})
    assert checked in form.content.decode() and "<html" not in form.content.decode()  # on by default

    response = client.post("/accounts/reminders/", {})  # unchecked, without JavaScript
    assert response.status_code == 302 and response["Location"] == "/me/"
    assert "Reminders are off." in client.get("/me/").content.decode()
    assert unchecked in client.get("/accounts/reminders/").content.decode()  # its own page, too
    assert not Preferences.objects.get(user=user).reminders

    saved = client.post("/accounts/reminders/", {"reminders": "on"}, headers={"HX-Request": "true"})
    assert checked in saved.content.decode() and "You will get a reminder" in saved.content.decode()
    assert Preferences.objects.get(user=user).reminders


def test_my_events_reads_nothing_more_for_the_setting(user):
    """The section costs My events no statement of its own: the preference comes with the person."""
    Preferences.set_reminders(user, on=False)
    client = Client()
    client.force_login(user)
    with CaptureQueriesContext(connection) as captured:
        page = client.get("/me/").content.decode()
    assert '<input type="checkbox" name="reminders">' in page
    reads = [query["sql"] for query in captured.captured_queries if "accounts_preferences" in query["sql"]]
    assert len(reads) == 1 and "auth_user" in reads[0]  # with the person, in one statement


def test_the_setting_needs_a_signed_in_person():
    response = Client().post("/accounts/reminders/", {})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Preferences.objects.exists()


@pytest.mark.parametrize(
    ("language", "subject", "phrase"),
    [
        ("zh-hant", "活動提醒：Reminder night", "提醒您：您已報名「Reminder night」。"),
        ("en", "Reminder: Reminder night", "A reminder: you are registered for “Reminder night”."),
    ],
)
def test_the_reminder_is_in_the_language_the_person_last_used(user, soon, language, subject, phrase):
    register(user, soon, language=language)
    with due(soon), translation.override("en" if language == "zh-hant" else "zh-hant"):  # the worker's own
        sweep()
    [message] = reminders()
    assert message.subject == subject
    assert phrase in message.body
    assert reminder_row().language == language


def test_without_any_earlier_mail_the_reminder_is_in_the_site_language(soon, settings):
    person = UserFactory(username="quiet")
    RegistrationFactory(user=person, event=soon, ticket_issued_at=timezone.now())  # no mail ever sent
    with due(soon):
        sweep()
    [message] = reminders()
    assert reminder_row().language == settings.LANGUAGE_CODE
    assert message.subject == "活動提醒：Reminder night"


def test_an_unsubscribe_link_works_for_sixty_days_only(user):
    url = f"/accounts/reminders/unsubscribe/{unsubscribe_token(user)}/"
    with time_machine.travel(timezone.now() + timedelta(days=59)):
        assert Client().get(url).status_code == 200
    with time_machine.travel(timezone.now() + timedelta(days=61)):
        assert Client().post(url).status_code == 404
    assert reminders_on(user)


def test_the_unsubscribe_token_is_in_no_log_line(user, caplog):
    token = unsubscribe_token(user)
    url = f"/accounts/reminders/unsubscribe/{token}/"
    server = logging.getLogger("django.server")  # it does not propagate: listen to it directly
    server.addHandler(caplog.handler)
    try:
        with (
            caplog.at_level(logging.INFO, logger="django.request"),
            caplog.at_level(logging.INFO, "django.server"),
        ):
            with time_machine.travel(timezone.now() + timedelta(days=61)):
                assert Client().post(url).status_code == 404  # "Not Found: <path>"
            server.info('"%s" %s %s', f"POST {url} HTTP/1.1", "200", "1234")  # the request line
    finally:
        server.removeHandler(caplog.handler)
    lines = [record.getMessage() for record in caplog.records]
    assert "Not Found: /accounts/reminders/unsubscribe/***/" in lines
    assert '"POST /accounts/reminders/unsubscribe/***/ HTTP/1.1" 200 1234' in lines
    assert token not in caplog.text
