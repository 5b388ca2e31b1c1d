"""Backups restore (`make backup`, `make restore FILE=…`; ops/backups.py), on the database the suite runs on.

A site with people, events, registrations whose e-mails were sent (one with answers to its event's
questions), a waiting list, an access token, paid registrations of two ticket types (one awaiting its
transfer, one paid as an imported bank statement found it) and Activity rows is backed up by `make
backup` itself, then restored by `make restore` into a fresh empty database (an SQLite file, or a
PostgreSQL database made for the test). Every table the database's catalogue lists has as many rows as
in the original (the seeded tables among the filled ones); a restored person signs in with their
password over HTTP on an app server started on the restored database, and their token still works; the
task worker run on it afterwards sends the mail that was waiting, once, and none of those sent before
the backup (their idempotency keys came along). A restore into a database with tables, or of a file of
the other kind, is refused and changes nothing.
"""

from __future__ import annotations

import email
import http.cookiejar
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from email import policy
from pathlib import Path

import psycopg
import pytest
from aiosmtpd.controller import Controller
from django.conf import global_settings, settings
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.tasks import TaskResultStatus
from django.test import override_settings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from psycopg import sql

from accounts.models import AccessToken
from accounts.tokens import create_access_token
from core.visitors import Visitor
from events import actions
from events.choices import BankRowState, NotificationKind, NotificationStatus, PaymentStatus
from events.mail import outbox
from events.models import (
    Activity,
    BankStatementRow,
    Event,
    Notification,
    Question,
    QuestionOption,
    Registration,
    TicketType,
    WaitlistEntry,
)
from events.scopes import READ
from harness.server import free_port
from ops.backups import client_invocation
from tests.factories import EventFactory, QuestionFactory, UserFactory, choice_question, paid_event
from tests.tasks import database_url, run_tasks, start_gunicorn

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "restored-horse-battery-staple"


class Inbox:
    """An SMTP server's handler (aiosmtpd, in the test process): keeps every message it accepts."""

    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"


@pytest.fixture
def smtp(settings) -> Iterator[tuple[Inbox, int]]:
    """The mail server both the test process and the worker started on the restored database send to."""
    inbox, port = Inbox(), free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": 5},
        }
    }
    yield inbox, port
    controller.stop()


@pytest.fixture
def empty_database(tmp_path: Path) -> Iterator[str]:
    """A DATABASE_URL naming a fresh empty database of the suite's kind: an SQLite file not made yet,
    or a PostgreSQL database beside the test database, dropped afterwards."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.sqlite3'}"
        return
    name = f"{connection.settings_dict['NAME']}_restored"
    with closing(_maintenance()) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield database_url().rsplit("/", 1)[0] + f"/{name}"
    with closing(_maintenance()) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _maintenance() -> psycopg.Connection:
    return psycopg.connect(database_url().rsplit("/", 1)[0] + "/postgres", autocommit=True)


def row_counts(url: str) -> dict[str, int]:
    """Every table of the database's schema, as its own catalogue lists them, with its row count."""
    if url.startswith("sqlite:///"):
        with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db:
            names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {name: db.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}
    with psycopg.connect(url) as db:
        names = [
            row[0]
            for row in db.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
        ]
        count = sql.SQL("SELECT count(*) FROM {}")
        return {name: db.execute(count.format(sql.Identifier(name))).fetchone()[0] for name in names}


def make(*args: str, url: str) -> subprocess.CompletedProcess:
    """A make target as a person runs it, on the database `url` names."""
    env = {**os.environ, "DATABASE_URL": url}
    for name in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "BACKUP_DIR"):
        env.pop(name, None)
    return subprocess.run(
        ["make", "-s", *args], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )


def manage(*args: str, url: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DATABASE_URL": url, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def call(name: str, user, **data) -> object:
    return actions.call(name, visitor=Visitor(user=user), channel="api", **data)


def seed_site(statement: Path) -> dict[str, object]:
    """People, events, registrations (their confirmations sent; one with answers to the event's
    questions), a waiting list whose offer is still to be mailed, a saved event, an access token, paid
    registrations and a bank statement (`seed_payments`) and the Activity rows of every call."""
    alice = UserFactory(username="alice", email="alice@example.com")
    # The app server started below checks the password with the site's own hasher, not the tests' MD5.
    with override_settings(PASSWORD_HASHERS=global_settings.PASSWORD_HASHERS):
        alice.set_password(PASSWORD)
    alice.save()
    bob = UserFactory(username="bob", email="bob@example.com")
    carol = UserFactory(username="carol", email="carol@example.com")
    workshop = EventFactory(public_id="evt-backup-workshop", title="Backup workshop")
    meetup = EventFactory(public_id="evt-backup-meetup", title="Backup meetup", capacity=1)
    EventFactory(draft=True)
    choice_question(workshop, "size", ["s", "m", "l"], required=True)
    QuestionFactory(event=workshop, identifier="company")
    call("register_event", alice, event_id=workshop.public_id, answers={"size": "m", "company": "ACME"})
    call("save_event", alice, event_id=meetup.public_id)
    call("register_event", bob, event_id=meetup.public_id)
    call("join_waitlist", carol, event_id=meetup.public_id)
    call("search_events", alice, query="Backup")
    _, token = create_access_token(user=alice, name="backup test", scopes=[READ], days=30)
    fair = seed_payments(statement)
    run_tasks()  # the confirmations and the payments' e-mails go out before the backup
    call("cancel_registration", bob, event_id=meetup.public_id)  # carol's offer: queued, not sent yet
    # Work that will find its mail sent already: the same change notified again, and the retries each
    # attempt queued before sending, as if the restore came after their delay.
    sent = Notification.objects.get(user=alice, kind=NotificationKind.REGISTRATION_CONFIRMED)
    cause = sent.key.removeprefix(f"{sent.kind}:").removesuffix(f":user-{alice.pk}")
    outbox.notify(sent.kind, user=alice, event=workshop, cause=cause, registration=sent.registration)
    retries = DBTaskResult.objects.filter(
        status=TaskResultStatus.READY, task_path__endswith="send_notification"
    ).update(run_after=timezone.now())
    assert retries >= 2
    return {"alice": alice, "token": token, "workshop": workshop, "fair": fair}


def seed_payments(statement: Path) -> Event:
    """A paid event of two ticket types: dave's transfer still awaited (pending), erin's paid, found in
    an imported bank statement (`manage.py import_bank_statement`: her row matched, a stranger's not)."""
    fair = paid_event(
        public_id="evt-backup-fair",
        title="Backup fair",
        payment_code="BKP27",
        prices={"regular": 600, "student": 300},
    )
    dave = UserFactory(username="dave", email="dave@example.com")
    erin = UserFactory(username="erin", email="erin@example.com")
    call("register_event", dave, event_id=fair.public_id, ticket_type="regular")
    call("register_event", erin, event_id=fair.public_id, ticket_type="student")
    paid = Registration.objects.get(user=erin)
    statement.write_text(
        "date,amount,reference,payer,account_last5\n"
        f"{timezone.localdate():%Y-%m-%d},300,{paid.payment_reference_text},Erin,12345\n"
        f"{timezone.localdate():%Y-%m-%d},500,birthday,Stranger,24680\n",
        encoding="utf-8",
    )
    call_command("import_bank_statement", str(statement), stdout=io.StringIO())
    states = dict(Registration.objects.filter(event=fair).values_list("user__username", "payment_status"))
    assert states == {"dave": PaymentStatus.AWAITING, "erin": PaymentStatus.PAID}, states
    rows = sorted(BankStatementRow.objects.values_list("state", flat=True))
    assert rows == sorted([BankRowState.MATCHED, BankRowState.NO_MATCH]), rows
    return fair


def test_a_backup_restores_into_an_empty_database_and_the_site_works_on_it(smtp, empty_database, tmp_path):
    inbox, port = smtp
    seeded = seed_site(tmp_path / "statement.csv")
    sent_before = sorted(message["To"] for message in inbox.messages)
    # The confirmations; dave's and erin's payment instructions, erin's ticket once her transfer came.
    people = ["alice", "bob", "dave", "erin", "erin"]
    assert sent_before == [f"{name}@example.com" for name in people]
    source = database_url()

    made = make("backup", f"BACKUP_DIR={tmp_path / 'backups'}", url=source)
    assert made.returncode == 0, made.stderr
    backup = Path(made.stdout.strip().splitlines()[-1])  # the file's path is the last line
    kind = "sqlite" if connection.vendor == "sqlite" else "postgresql"
    assert backup.parent == tmp_path / "backups" and backup.is_file()
    assert re.fullmatch(rf"{kind}-\d{{8}}T\d{{6}}Z\.(sqlite3|dump)", backup.name)
    assert backup.stat().st_mode & 0o077 == 0  # the owner's alone: it holds password hashes

    before = row_counts(source)
    restored = make("restore", f"FILE={backup}", url=empty_database)
    assert restored.returncode == 0, restored.stderr
    assert "`manage.py migrate` has nothing to apply" in restored.stdout
    after = row_counts(empty_database)
    assert after == before
    filled = {table for table, rows in after.items() if rows}
    seeded_models = (
        User,
        Event,
        Registration,
        WaitlistEntry,
        Notification,
        Activity,
        AccessToken,
        DBTaskResult,
        Question,
        QuestionOption,
        TicketType,
        BankStatementRow,
    )
    assert {model._meta.db_table for model in seeded_models} | {"django_migrations"} <= filled
    print(f"\nbackups restore: {len(after)} tables compared, {sum(after.values())} rows ({kind})")
    checked = manage("migrate", "--check", url=empty_database)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # nothing to apply

    server, base = start_gunicorn(DATABASE_URL=empty_database, DEBUG="1")
    try:
        assert sign_in(base, "alice", "not-the-password") is None
        session = sign_in(base, "alice", PASSWORD)
        assert session is not None, "the restored person could not sign in with their password"
        registrations = get_json(base, "/api/me/registrations", session=session)
        assert seeded["workshop"].public_id in json.dumps(registrations)
        assert "count" in get_json(base, "/api/me/registrations", bearer=str(seeded["token"]))
    finally:
        server.terminate()
        server.wait(timeout=15)

    worked = manage(
        "db_worker",
        "--batch",
        "--no-reload",
        "--no-startup-delay",
        "--interval",
        "0",
        url=empty_database,
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(port),
    )
    assert worked.returncode == 0, worked.stderr
    sent_after = sorted(message["To"] for message in inbox.messages[len(sent_before) :])
    assert sent_after == ["carol@example.com"], "a mail sent before the backup went again, or none went"
    statuses = row_statuses(empty_database)
    assert statuses == {str(NotificationStatus.SENT): len(people) + 1}, statuses


def test_a_restore_is_refused_into_a_database_with_tables_and_of_the_other_kind(tmp_path):
    UserFactory(username="kept")
    source = database_url()
    kind = "sqlite" if connection.vendor == "sqlite" else "postgresql"
    made = make("backup", f"BACKUP_DIR={tmp_path}", url=source)
    assert made.returncode == 0, made.stderr
    backup = made.stdout.strip().splitlines()[-1]
    before = row_counts(source)
    # On PostgreSQL the URL carries a password (trust authentication ignores it): no message shows it.
    target = re.sub(r"://([^:@/]+)@", r"://\1:never-shown-pw@", source, count=1)
    refused = make("restore", f"FILE={backup}", url=target)
    assert refused.returncode != 0
    assert "is not empty" in refused.stderr and "nothing was changed" in refused.stderr, refused.stderr
    assert "never-shown-pw" not in refused.stdout + refused.stderr
    assert row_counts(source) == before

    other = tmp_path / "other-kind"
    if kind == "postgresql":
        with closing(sqlite3.connect(other)) as db:
            db.execute("CREATE TABLE t (x)")
    else:
        other.write_bytes(b"PGDMP\x01\x0f\x00")  # how a pg_dump custom-format file begins
    with pytest.raises(CommandError, match="restores only into a database of its kind"):
        call_command("restore", str(other))
    (tmp_path / "notes.txt").write_text("not a backup")
    with pytest.raises(CommandError, match="is not a backup made by"):
        call_command("restore", str(tmp_path / "notes.txt"))
    assert row_counts(source) == before


def test_the_password_reaches_the_postgresql_clients_by_their_environment_only():
    db = {"NAME": "events", "USER": "events", "PASSWORD": "pw-in-env", "HOST": "db", "PORT": 5432}
    db["OPTIONS"] = {"sslmode": "require", "sslpassword": "key-pw", "pool": True}
    argv, env = client_invocation(Path("/usr/bin/pg_dump"), db, "--format=custom", environ={})
    assert env == {"PGPASSWORD": "pw-in-env"}
    assert "pw-in-env" not in " ".join(argv) and "key-pw" not in " ".join(argv)
    assert "--no-password" in argv
    target = psycopg.conninfo.conninfo_to_dict(argv[2].removeprefix("--dbname="))
    assert target == {
        "dbname": "events",
        "host": "db",
        "port": "5432",
        "user": "events",
        "sslmode": "require",
    }


def row_statuses(url: str) -> dict[str, int]:
    query = "SELECT status, count(*) FROM events_notification GROUP BY status"
    if url.startswith("sqlite:///"):
        with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db:
            return dict(db.execute(query).fetchall())
    with psycopg.connect(url) as db:
        return dict(db.execute(query).fetchall())


def sign_in(base: str, username: str, password: str) -> str | None:
    """Django's sign-in form, as a browser posts it; the session cookie it sets, or None if refused."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base}/accounts/login/", timeout=10).read().decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert csrf, page[:2000]
    form = {"csrfmiddlewaretoken": csrf.group(1), "username": username, "password": password}
    request = urllib.request.Request(
        f"{base}/accounts/login/",
        data=urllib.parse.urlencode(form).encode(),
        headers={"Referer": f"{base}/accounts/login/"},
    )
    with opener.open(request, timeout=10):
        pass
    return next((cookie.value for cookie in jar if cookie.name == settings.SESSION_COOKIE_NAME), None)


def get_json(base: str, path: str, *, session: str = "", bearer: str = "") -> dict:
    headers = {"Accept": "application/json"}
    if session:
        headers["Cookie"] = f"{settings.SESSION_COOKIE_NAME}={session}"
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    try:
        with urllib.request.urlopen(
            urllib.request.Request(f"{base}{path}", headers=headers), timeout=10
        ) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{path}: {error.code} {error.read()[:500]!r}") from error
