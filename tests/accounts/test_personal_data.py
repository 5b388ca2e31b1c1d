"""The person's data (accounts/privacy.py): the export holds every part and no secret; deleting an account
passes its seats to the people waiting, leaves no trace of the person's name or address in any text
column, and refuses the last superuser; retention removes only what is past its period; every table that
holds something of a person is covered; the privacy page."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
import time_machine
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.apps import apps
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.models import Session
from django.core import mail
from django.db import models
from django.tasks import TaskResultStatus
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_refresh_token_model,
    set_token_value,
)

from accounts import privacy
from accounts.models import AccessToken, AgentUse
from accounts.tasks import clear_expired_personal_data
from accounts.tokens import create_access_token
from core.visitors import Visitor
from events import actions
from events.choices import NotificationKind, NotificationStatus, RegistrationStatus, StaffRole, WaitlistStatus
from events.mail.outbox import open_notification
from events.models import (
    Activity,
    CheckIn,
    EventStaff,
    Notification,
    Registration,
    SavedEvent,
    VisitorState,
    WaitlistEntry,
)
from tests.factories import EventFactory, RegistrationFactory, UserFactory
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EN = {"Accept-Language": "en"}
PASSWORD = "correct-horse-battery"  # the factories' password
USERNAME = "zq-departing-7"
EMAIL = "zq.departing.seven@example.org"
OAUTH_SECRET = "oauth-access-token-value-never-exported"
REFRESH_SECRET = "oauth-refresh-token-value-never-exported"


def call(name: str, person, **data):
    return actions.call(name, visitor=Visitor(user=person), channel="ui", **data)


@pytest.fixture
def person(db):
    """Someone with a bit of everything: a save, a seat of a full event with Wanda waiting, a place on
    another full event's list, a registration of an event that started, their own check-in, a door role
    and a check-in they did, e-mails sent, a personal access token, a connected agent (and a client
    they registered), a session, sign-in records, the admin's history about them, and Activity rows."""
    user = UserFactory(username=USERNAME, email=EMAIL, first_name="Zora", last_name="Quill")

    full = EventFactory(public_id="evt-full", title="Full event", capacity=1)
    call("register_event", user, event_id=full.public_id)
    wanda = UserFactory(username="wanda")
    call("join_waitlist", wanda, event_id=full.public_id)

    other_full = EventFactory(public_id="evt-other-full", title="Another full event", capacity=1)
    call("register_event", UserFactory(username="hana"), event_id=other_full.public_id)
    call("join_waitlist", user, event_id=other_full.public_id)

    saved = EventFactory(public_id="evt-saved", title="Saved event")
    call("save_event", user, event_id=saved.public_id)
    RegistrationFactory(user=user, event=EventFactory(past=True, public_id="evt-started", title="Started"))

    attended = EventFactory(public_id="evt-attended", title="Attended event")
    call("register_event", user, event_id=attended.public_id)
    mei = UserFactory(username="mei")
    EventStaff.objects.create(event=attended, user=mei, role=StaffRole.DOOR)
    own = Registration.objects.get(user=user, event=attended)
    call("check_in_attendee", mei, event_id=attended.public_id, ticket=own.ticket_code)

    door = EventFactory(public_id="evt-door", title="Door duty")
    staff_row = EventStaff.objects.create(event=door, user=user, role=StaffRole.DOOR)
    call("register_event", UserFactory(username="ada"), event_id=door.public_id)
    ada = Registration.objects.get(user__username="ada", event=door)
    call("check_in_attendee", user, event_id=door.public_id, ticket=ada.ticket_code)

    run_tasks()  # the confirmations go out: Notification rows, and the outbox's task rows
    create_access_token(user=user, name="my script", scopes=["events:read"], days=30)
    application = get_application_model().objects.create(
        name="Claude Code",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:5000/callback",
        user=user,
    )
    access = get_access_token_model()(
        user=user, application=application, scope="events:read", expires=timezone.now() + timedelta(hours=1)
    )
    set_token_value(access, OAUTH_SECRET)
    access.save()
    refresh = get_refresh_token_model()(user=user, application=application, access_token=access)
    set_token_value(refresh, REFRESH_SECRET)
    refresh.save()
    AgentUse.objects.create(user=user, application=application, last_used_at=timezone.now())

    browser = Client(headers=EN, REMOTE_ADDR="10.1.2.3")
    browser.post("/accounts/login/", {"username": USERNAME, "password": "wrong"})  # a failure …
    assert browser.post("/accounts/login/", {"username": USERNAME, "password": PASSWORD}).status_code == 302
    AccessFailureLog.objects.create(
        username=USERNAME,
        ip_address="10.1.2.3",
        user_agent="test",
        http_accept="",
        path_info="/accounts/login/",
    )
    admin = UserFactory(username="staff-admin", is_staff=True, is_superuser=True)
    LogEntry.objects.log_actions(admin.pk, [user], CHANGE, change_message="Changed e-mail address.")
    # What the event admin writes when a staff member is added in its inline:
    LogEntry.objects.log_actions(
        admin.pk, [door], CHANGE, [{"added": {"name": "event staff member", "object": str(staff_row)}}]
    )
    user.refresh_from_db()
    user.browser = browser
    return user


# ── the export ────────────────────────────────────────────────────────────────────────────────


def test_the_export_has_every_part_and_no_secret(person):
    data = privacy.export_personal_data(user=person)

    assert data["account"]["username"] == USERNAME and data["account"]["email"] == EMAIL
    assert data["account"]["date_joined"] and data["account"]["last_login"]
    assert [s["event_id"] for s in data["saved_events"]] == ["evt-saved"]
    registrations = {r["event_id"]: r for r in data["registrations"]}
    assert set(registrations) == {"evt-full", "evt-started", "evt-attended"}
    assert (
        registrations["evt-full"]["has_ticket"] is True
        and registrations["evt-started"]["has_ticket"] is False
    )
    assert [(e["event_id"], e["status"]) for e in data["waiting_lists"]] == [("evt-other-full", "waiting")]
    assert [c["event_id"] for c in data["check_ins"]] == ["evt-attended"]  # their own, not Ada's
    assert {n["event_id"] for n in data["notifications"]} == {"evt-full", "evt-attended"}
    assert {n["status"] for n in data["notifications"]} == {"sent"}
    [token] = data["access_tokens"]
    assert (
        token["name"] == "my script"
        and token["prefix"].startswith("are_")
        and token["scopes"] == ["events:read"]
    )
    [agent] = data["connected_agents"]
    assert agent["client"] == "Claude Code" and agent["scopes"] == ["events:read"]
    assert [(r["event_id"], r["role"]) for r in data["event_roles"]] == [("evt-door", "door")]
    assert {a["action"] for a in data["activity"]} >= {"register_event", "join_waitlist", "save_event"}
    assert data["sign_ins"]["successful"][0]["address"] == "10.1.2.3"
    assert data["sign_ins"]["failed"][0]["address"] == "10.1.2.3"

    text = json.dumps(data)
    secrets = [
        *Registration.objects.filter(user=person)
        .exclude(ticket_code=None)
        .values_list("ticket_code", flat=True),
        *AccessToken.objects.filter(user=person).values_list("digest", flat=True),
        *get_access_token_model().objects.filter(user=person).values_list("token", flat=True),
        *get_access_token_model().objects.filter(user=person).values_list("token_checksum", flat=True),
        *get_refresh_token_model().objects.filter(user=person).values_list("token", flat=True),
        OAUTH_SECRET,
        REFRESH_SECRET,
        person.password,
    ]
    assert len(secrets) >= 8
    assert [secret for secret in secrets if secret and secret in text] == []


def test_the_export_is_served_at_api_me_export_with_a_reading_token(person):
    _token, raw = create_access_token(user=person, name="export", scopes=["events:read"], days=1)
    response = Client().get("/api/me/export", headers={"Authorization": f"Bearer {raw}"})
    assert response.status_code == 200
    body = response.json()
    assert body["account"]["username"] == USERNAME
    assert set(body) == set(privacy.export_personal_data(user=person))
    assert all(body[part] for part in ("registrations", "notifications", "activity", "connected_agents"))


def test_the_export_needs_a_session_or_a_token_that_may_read(person):
    _token, narrow = create_access_token(user=person, name="narrow", scopes=["saved:write"], days=1)
    assert Client().get("/api/me/export", headers={"Authorization": f"Bearer {narrow}"}).status_code == 403
    assert Client().get("/api/me/export").status_code == 401
    assert (
        Client().get("/api/me/export", headers={"Authorization": f"Bearer {OAUTH_SECRET}"}).status_code == 401
    )
    assert person.browser.get("/api/me/export").json()["account"]["email"] == EMAIL  # the session
    assert person.browser.get("/api/me/export?x=1").status_code == 400


def test_my_events_links_the_data_page_which_shows_it(person):
    me = person.browser.get("/me/").content.decode()
    assert 'href="/me/data/"' in me and 'href="/api/me/export" download' in me
    assert 'href="/accounts/delete/"' in me
    page = person.browser.get("/me/data/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Your data" in html and "Full event" in html and "my script" in html and "10.1.2.3" in html
    assert Registration.objects.get(user=person, event__public_id="evt-full").ticket_code not in html
    assert Client().get("/me/data/").status_code == 302  # to sign in


def test_personal_data_is_neither_a_tool_nor_an_action():
    from events.actions import ACTIONS
    from events.tools import registry

    names = {tool.name for tool in registry.tools()} | set(ACTIONS)
    assert not {name for name in names if re.search(r"export|personal|delete|account", name)}


# ── every table that holds something of a person is covered ───────────────────────────────────

PERSONAL_NAME = re.compile(r"email|ip_address|visitor|username")


def holds_something_of_a_person(model: type[models.Model]) -> bool:
    User = get_user_model()
    for field in model._meta.concrete_fields:
        if field.is_relation and field.related_model is User:
            return True
        if PERSONAL_NAME.search(field.name):
            return True
    return False


def test_every_table_that_holds_something_of_a_person_is_covered():
    discovered = {
        model._meta.label
        for model in apps.get_models(include_auto_created=True)
        if holds_something_of_a_person(model)
    }
    assert {"auth.User", "events.Activity", "axes.AccessAttempt", "oauth2_provider.Grant"} <= discovered
    assert discovered - set(privacy.COVERED) == set(), "add them to accounts.privacy.COVERED (and cover them)"
    for label, ways in privacy.COVERED.items():
        assert set(ways.split("+")) <= privacy.WAYS, label


# ── deleting an account ───────────────────────────────────────────────────────────────────────


def sessions_of(user_id: int) -> list[str]:
    """The keys of the sessions signed in as `user_id` (Django's sessions name them in their data)."""
    return [row.pk for row in Session.objects.all() if row.get_decoded().get(SESSION_KEY) == str(user_id)]


def text_columns(model: type[models.Model]) -> list[str]:
    return [
        field.name
        for field in model._meta.concrete_fields
        if isinstance(field, models.CharField | models.TextField | models.JSONField)
    ]


def rows_naming(words: list[str]) -> list[str]:
    """Every text column of every table that contains one of `words` (case aside): nothing excluded."""
    found = []
    for model in apps.get_models(include_auto_created=True):
        if model._meta.proxy or not model._meta.managed:
            continue
        for column in text_columns(model):
            for word in words:
                if model._base_manager.filter(**{f"{column}__icontains": word}).exists():
                    found.append(f"{model._meta.label}.{column} ~ {word}")
    return found


def test_deleting_passes_the_seat_on_and_leaves_no_trace_of_the_name_or_address(
    person, django_capture_on_commit_callbacks
):
    assert rows_naming([USERNAME, EMAIL])  # the scan finds them before
    person_id = person.pk
    checked_in_ada = CheckIn.objects.get(staff=person)
    activity_rows = Activity.objects.filter(user=person).count()
    assert sessions_of(person_id)  # signed in on the browser
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        result = privacy.delete_account(user=person, language="en")

    assert result.registrations_cancelled == 2 and result.waiting_lists_left == 1  # the started one: refused
    assert not get_user_model().objects.filter(pk=person_id).exists()
    # Every write has its Activity row, through the person's page: their rows' and the declared one's.
    mine = Activity.objects.filter(mode="ui", action__in=["cancel_registration", "leave_waitlist"])
    assert mine.filter(outcome="OK").count() == 3
    [deleted] = Activity.objects.filter(action="delete_account")
    assert (deleted.mode, deleted.outcome, deleted.user_id, deleted.visitor_token) == ("ui", "OK", None, "")
    # The seat of the full event went to the first person waiting:
    offer = WaitlistEntry.objects.get(user__username="wanda", event__public_id="evt-full")
    assert offer.status == WaitlistStatus.OFFERED and offer.expires_at is not None
    # What stays, without the person:
    checked_in_ada.refresh_from_db()
    assert checked_in_ada.staff is None
    assert Activity.objects.filter(user=None, visitor_token="").count() >= activity_rows
    assert get_application_model().objects.get(name="Claude Code").user is None
    # What goes:
    for model in (
        Registration,
        WaitlistEntry,
        SavedEvent,
        Notification,
        EventStaff,
        AccessToken,
        AgentUse,
    ):
        assert not model.objects.filter(**{"user_id": person_id}).exists(), model
    assert sessions_of(person_id) == []
    assert not get_access_token_model().objects.filter(user_id=person_id).exists()
    assert not get_refresh_token_model().objects.filter(user_id=person_id).exists()
    assert not VisitorState.objects.filter(visitor_key=f"user:{person_id}").exists()
    assert not AccessAttempt.objects.exists() and not AccessLog.objects.exists()
    # No text column of any table names the person any more:
    assert rows_naming([USERNAME, EMAIL]) == []
    # … and a last e-mail says so:
    [goodbye] = mail.outbox
    assert goodbye.to == [EMAIL] and "deleted" in goodbye.subject


def test_the_page_asks_for_the_password_and_a_wrong_one_changes_nothing(person):
    page = person.browser.get("/accounts/delete/")
    assert page.status_code == 200 and 'name="password"' in page.content.decode()

    wrong = person.browser.post("/accounts/delete/", {"password": "not-it"})

    assert wrong.status_code == 400
    assert "That is not your password: nothing was deleted." in wrong.content.decode()
    assert get_user_model().objects.filter(pk=person.pk).exists()
    assert Registration.objects.filter(user=person, status=RegistrationStatus.CONFIRMED).count() == 3
    assert AccessAttempt.objects.filter(username=USERNAME).exists()  # it counts towards the pause


def test_wrong_passwords_pause_the_page_like_sign_in(person):
    for _attempt in range(5):
        person.browser.post("/accounts/delete/", {"password": "not-it"})
    paused = person.browser.post("/accounts/delete/", {"password": PASSWORD})
    assert paused.status_code == 429 and "Sign-in is paused" in paused.content.decode()
    assert get_user_model().objects.filter(pk=person.pk).exists()


def test_the_page_deletes_with_the_right_password_and_signs_out(person, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = person.browser.post("/accounts/delete/", {"password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/events/"
    assert not get_user_model().objects.filter(username=USERNAME).exists()
    assert "Sign in to register" in person.browser.get("/me/").content.decode()
    assert any("deleted" in message.subject for message in mail.outbox)


def test_the_last_superuser_cannot_be_deleted(db, django_capture_on_commit_callbacks):
    boss = UserFactory(username="only-boss", is_staff=True, is_superuser=True)
    browser = Client(headers=EN)
    browser.force_login(boss)

    page = browser.get("/accounts/delete/")
    assert page.status_code == 200 and "last superuser" in page.content.decode()
    assert 'name="password"' not in page.content.decode()
    assert browser.post("/accounts/delete/", {"password": PASSWORD}).status_code == 409
    with pytest.raises(privacy.LastSuperuser):
        privacy.delete_account(user=boss)
    assert get_user_model().objects.filter(pk=boss.pk).exists()

    other = UserFactory(username="second-boss", is_staff=True, is_superuser=True)
    with django_capture_on_commit_callbacks(execute=True):
        privacy.delete_account(user=other)  # not the last one
    assert not get_user_model().objects.filter(pk=other.pk).exists()


def test_the_admin_deletes_an_account_and_its_data_but_not_the_last_superuser(person, client):
    boss = get_user_model().objects.get(username="staff-admin")
    client.force_login(boss)
    changelist = "/admin/auth/user/"
    assert "delete_selected" not in client.get(changelist).content.decode()

    response = client.post(
        changelist,
        {"action": "delete_account_and_personal_data", "_selected_action": [person.pk, boss.pk]},
        follow=True,
        headers=EN,
    )

    html = response.content.decode()
    assert "1 account and its personal data were deleted" in html
    assert "last superuser" in html
    assert not get_user_model().objects.filter(pk=person.pk).exists()
    assert get_user_model().objects.filter(pk=boss.pk).exists()
    entry = LogEntry.objects.get(object_id=str(person.pk), content_type__model="user")
    assert entry.object_repr == f"account #{person.pk}" and entry.user == boss
    assert WaitlistEntry.objects.get(user__username="wanda").status == WaitlistStatus.OFFERED
    assert rows_naming([USERNAME, EMAIL]) == []
    # Its writes are recorded through the admin's channel, not as the person's own page.
    assert set(Activity.objects.filter(action="delete_account").values_list("mode", flat=True)) == {"admin"}
    assert Activity.objects.filter(action="cancel_registration", mode="admin", outcome="OK").exists()
    assert client.get(f"/admin/auth/user/{boss.pk}/delete/").status_code == 403  # no plain delete either


def test_the_admin_delete_button_deletes_the_same_way(person, client):
    boss = get_user_model().objects.get(username="staff-admin")
    client.force_login(boss)
    response = client.post(f"/admin/auth/user/{person.pk}/delete/", {"post": "yes"}, headers=EN)
    assert response.status_code == 302
    assert not get_user_model().objects.filter(pk=person.pk).exists()
    assert WaitlistEntry.objects.get(user__username="wanda").status == WaitlistStatus.OFFERED
    assert LogEntry.objects.get(object_id=str(person.pk), content_type__model="user").object_repr == (
        f"account #{person.pk}"
    )
    assert rows_naming([USERNAME, EMAIL]) == []


# ── retention ─────────────────────────────────────────────────────────────────────────────────


def test_retention_removes_only_what_is_past_its_period(settings):
    settings.RETENTION_SIGN_IN_ATTEMPTS_DAYS = 30
    settings.RETENTION_VISITOR_TOKENS_DAYS = 90
    settings.RETENTION_NOTIFICATIONS_DAYS = 180
    DBTaskResult.objects.filter(task_path=clear_expired_personal_data.module_path).delete()  # migrate's
    start = timezone.now().replace(microsecond=0)
    user = UserFactory(email="kept@example.org")
    event = EventFactory()

    def sign_in_records(label: str) -> None:
        common = {"ip_address": "10.0.0.9", "user_agent": label, "http_accept": "", "path_info": "/"}
        AccessAttempt.objects.create(
            username=label, get_data="", post_data="", failures_since_start=1, **common
        )
        AccessLog.objects.create(username=label, **common)
        AccessFailureLog.objects.create(username=label, **common)

    def mail_sent(key: str) -> Notification:
        return Notification.objects.create(
            kind=NotificationKind.REGISTRATION_CONFIRMED,
            key=key,
            user=user,
            email=user.email,
            event=event,
            language="en",
            status=NotificationStatus.SENT,
            sent_at=timezone.now(),
            last_error="a 4xx once",
        )

    def finished_task() -> DBTaskResult:
        open_notification.enqueue("key", {"email": user.email})
        row = DBTaskResult.objects.filter(task_path=open_notification.module_path).latest("enqueued_at")
        DBTaskResult.objects.filter(pk=row.pk).update(
            status=TaskResultStatus.SUCCESSFUL, finished_at=timezone.now()
        )
        return row

    with time_machine.travel(start, tick=False):
        sign_in_records("old")
        Activity.objects.create(action="search_events", mode="ui", outcome="OK", visitor_token="old-token")
        old_mail = mail_sent("old")
        old_task = finished_task()
        pending = Notification.objects.create(
            kind=NotificationKind.REGISTRATION_CONFIRMED, key="pending", user=user, email=user.email,
            event=event, language="en", status=NotificationStatus.FAILED, last_error="refused",
        )  # fmt: skip
    with time_machine.travel(start + timedelta(days=20), tick=False):
        sign_in_records("recent")
        Activity.objects.create(action="search_events", mode="ui", outcome="OK", visitor_token="recent-token")
        recent_mail = mail_sent("recent")
        recent_task = finished_task()

    def tokens() -> set[str]:
        return set(Activity.objects.filter(action="search_events").values_list("visitor_token", flat=True))

    with time_machine.travel(start + timedelta(days=29), tick=False):
        privacy.clear_expired_personal_data()
    assert AccessAttempt.objects.count() == AccessLog.objects.count() == AccessFailureLog.objects.count() == 2

    with time_machine.travel(start + timedelta(days=31), tick=False):
        clear_expired_personal_data.call()  # the periodic task: the same, and its next run queued
    for model in (AccessAttempt, AccessLog, AccessFailureLog):
        assert list(model.objects.values_list("username", flat=True)) == ["recent"]
    assert tokens() == {"old-token", "recent-token"}

    with time_machine.travel(start + timedelta(days=91), tick=False):
        privacy.clear_expired_personal_data()
    assert tokens() == {"", "recent-token"} and Activity.objects.filter(action="search_events").count() == 2
    # Each run that cleared something is the site's declared write, with its own Activity row.
    sweeps = Activity.objects.filter(action="clear_expired_personal_data")
    assert {(row.mode, row.client, row.user_id) for row in sweeps} == {
        ("system", "clear_expired_personal_data", None)
    }
    assert sweeps.count() == 2  # days 31 and 91; the run of day 29 cleared nothing, so wrote no row

    with time_machine.travel(start + timedelta(days=181), tick=False):
        cleared = privacy.clear_expired_personal_data()
    assert cleared.notifications == 1 and cleared.queued_mail_rows == 1
    old_mail.refresh_from_db()
    recent_mail.refresh_from_db()
    pending.refresh_from_db()
    assert (old_mail.email, old_mail.last_error) == ("", "") and old_mail.status == NotificationStatus.SENT
    assert (recent_mail.email, recent_mail.last_error) == ("kept@example.org", "a 4xx once")
    assert pending.email == "kept@example.org"  # not sent: the admin may send it again
    assert not DBTaskResult.objects.filter(pk=old_task.pk).exists()
    assert DBTaskResult.objects.filter(pk=recent_task.pk).exists()
    [following] = DBTaskResult.objects.filter(
        task_path=clear_expired_personal_data.module_path, status=TaskResultStatus.READY
    )
    assert following.run_after == start + timedelta(days=32)


# ── the privacy page ──────────────────────────────────────────────────────────────────────────


def test_the_privacy_page_says_how_long_in_both_languages(client, settings):
    settings.RETENTION_SIGN_IN_ATTEMPTS_DAYS = 30
    english = Client(headers=EN).get("/privacy/")
    assert english.status_code == 200
    html = english.content.decode()
    assert "<h1>Privacy</h1>" in html and "deleted after 30 days" in html and "180 days" in html
    chinese = client.get("/privacy/").content.decode()
    assert '<html lang="zh-Hant">' in chinese and "隱私" in chinese and "30 天" in chinese
    assert "Sign-in attempts are deleted" not in chinese


def test_every_page_links_the_privacy_page_in_its_footer(client, event):
    for path in ("/events/", f"/events/{event.public_id}/", "/me/", "/accounts/login/", "/privacy/"):
        footer = client.get(path).content.decode().split('<footer class="site-footer">')[1]
        assert 'href="/privacy/"' in footer, path


def test_deleting_leaves_a_row_for_each_cancellation_and_place_given_up(
    person, django_capture_on_commit_callbacks
):
    since = Activity.objects.order_by("-id").values_list("id", flat=True).first() or 0
    with django_capture_on_commit_callbacks(execute=True):
        result = privacy.delete_account(user=person, language="en")
    done = Activity.objects.filter(
        id__gt=since, action__in=["cancel_registration", "leave_waitlist"], outcome="OK"
    )
    made = sorted(done.values_list("action", "mode", "outcome", "user"))
    assert made == sorted(
        [("cancel_registration", "ui", "OK", None)] * result.registrations_cancelled
        + [("leave_waitlist", "ui", "OK", None)] * result.waiting_lists_left
    )
    assert result.registrations_cancelled == 2
    refused = Activity.objects.filter(id__gt=since, action="cancel_registration").exclude(outcome="OK")
    assert list(refused.values_list("outcome", flat=True)) == ["REGISTRATION_CLOSED"]  # the started one
