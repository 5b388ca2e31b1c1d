"""The person's data: everything the site holds about them (`export_personal_data`), deleting their
account with it (`delete_account`), and what the retention task clears (`clear_expired_personal_data`).

`COVERED` names every table that holds something of a person and how it is covered, so a new one is
noticed: tests/accounts/test_personal_data.py walks the models and fails on a table that has a link to
the user, or a column named like an address, a username or a visitor's token, and is not listed here.
Each value joins the ways a table is covered with "+":

- ``export``: its rows of the person are in the export (My data, `GET /api/me/export`);
- ``delete``: deleting the account deletes its rows of the person (here, or by the database's cascade);
- ``anonymise``: deleting the account keeps the rows but clears the person from them;
- ``retention``: rows (or their personal columns) are removed once past their period, for everyone.

Secrets are never exported: not the ticket code (only whether a ticket is held), not a token's digest,
not an OAuth token or code.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.mail import EmailMessage
from django.db import models, transaction
from django.db.models import Q
from django.tasks import TaskResultStatus
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django_tasks_db.models import DBTaskResult
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_device_grant_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)

from core.visitors import Mode, Visitor
from events.actions import ACTIONS, Caller, perform, recorded_write, system_caller
from events.choices import ACTIVE_WAITLIST, HOLDING_SEAT, NotificationStatus
from events.mail.outbox import QUEUED_MAIL_PATHS
from events.models import (
    Activity,
    BankStatementRow,
    CheckIn,
    EventStaff,
    Notification,
    Registration,
    SavedEvent,
    VisitorState,
    WaitlistEntry,
)

from .models import AccessToken, AgentUse
from .oauth.grants import list_connected_agents, revoke_connected_agent

logger = logging.getLogger(__name__)

COVERED: dict[str, str] = {
    # The account itself, and Django's links of it (groups, permissions): deleted with it.
    "auth.User": "export+delete",
    "auth.User_groups": "delete",
    "auth.User_user_permissions": "delete",
    # The admin's history: a staff member's own entries go with their account (Django's cascade);
    # entries about the person's rows are deleted, and their name is taken out of entries about others'.
    "admin.LogEntry": "delete+anonymise",
    # Events. Anonymous visitors' saves (visitor_token) are merged into the account at sign-in.
    "events.SavedEvent": "export+delete",
    "events.Registration": "export+delete",
    "events.WaitlistEntry": "export+delete",
    # A bank statement's rows: who imported them is cleared with their account (SET_NULL); the payer's
    # name and account digits are blanked RETENTION_PAYMENTS_DAYS after the event (amounts stay).
    "events.BankStatementRow": "anonymise+retention",
    # Their own check-ins go with their registrations; check-ins they did as staff stay, without them.
    "events.CheckIn": "export+delete+anonymise",
    "events.EventStaff": "export+delete",
    "events.Notification": "export+delete+retention",
    "events.VisitorState": "delete",  # "user:<id>" → the person's stateVersion
    "events.Activity": "export+anonymise+retention",
    "events.CalendarFeed": "delete",  # a secret calendar address (a capability): deleted, never exported
    # The outbox's queued e-mails (task rows) carry the address they go to.
    "django_tasks_database.DBTaskResult": "delete+retention",
    # Accounts.
    "accounts.AccessToken": "export+delete",
    "accounts.AgentUse": "export+delete",
    "sessions.Session": "delete",  # Django's sessions: ended when the person is (accounts/sessions.py)
    "accounts.Preferences": "delete",  # e-mail preferences: a setting, deleted with the account
    # django-oauth-toolkit: what connected agents hold; a client the person registered stays, unowned.
    "oauth2_provider.Application": "anonymise",
    "oauth2_provider.AccessToken": "export+delete",
    "oauth2_provider.RefreshToken": "export+delete",
    "oauth2_provider.Grant": "delete",
    "oauth2_provider.IDToken": "delete",
    "oauth2_provider.DeviceGrant": "delete",
    # django-axes: sign-in attempts under the person's username (and anyone's address).
    "axes.AccessAttempt": "export+delete+retention",
    "axes.AccessLog": "export+delete+retention",
    "axes.AccessFailureLog": "export+delete+retention",
}
WAYS = {"export", "delete", "anonymise", "retention"}

#: What replaces the person's name in the admin's history of other rows.
DELETED = "[deleted account]"


def _iso(value: datetime | None) -> str | None:
    """A time as the API gives it: ISO 8601 in the site's time zone."""
    return timezone.localtime(value).isoformat() if value is not None else None


def _sign_in_rows(user: Any) -> Q:
    """Sign-in records kept under the person's username (as typed: case aside) or e-mail address."""
    q = Q(username__iexact=user.get_username())
    return q | Q(username__iexact=user.email) if user.email else q


# ── the export ────────────────────────────────────────────────────────────────────────────────


def export_personal_data(*, user: Any) -> dict[str, Any]:
    """Everything the site holds about `user`, as one JSON-ready document (strings, numbers, lists):
    the account, saves, registrations (whether a ticket is held, never its code), waiting-list places,
    their check-ins, the e-mails sent to them, personal access tokens (never the digest), connected
    agents (never a token), event roles, what they did (Activity) and the sign-in records under their
    username. Reads only."""
    return {
        "exported_at": _iso(timezone.now()),
        "account": {
            "username": user.get_username(),
            "first_name": user.first_name,
            "last_name": user.last_name,
            "email": user.email,
            "date_joined": _iso(user.date_joined),
            "last_login": _iso(user.last_login),
            "is_staff": user.is_staff,
        },
        "saved_events": [
            {
                "event_id": save.event.public_id,
                "event_title": save.event.title,
                "saved_at": _iso(save.created_at),
            }
            for save in SavedEvent.objects.filter(user=user)
            .select_related("event")
            .order_by("created_at", "id")
        ],
        "registrations": [
            {
                "event_id": registration.event.public_id,
                "event_title": registration.event.title,
                "status": registration.status,
                "registered_at": _iso(registration.created_at),
                "updated_at": _iso(registration.updated_at),
                "has_ticket": registration.ticket_code is not None,
                "ticket_issued_at": _iso(registration.ticket_issued_at),
                # Every answer they gave, each with the question as they answered it (the organisers'
                # own questions' answers are about them too).
                "answers": registration.answers,
                "ticket_type": registration.ticket_type,
                # Their payment (integer TWD), and what they reported of their transfer: their own.
                "payment": {
                    "amount": registration.amount,
                    "currency": "TWD",
                    "method": registration.payment_method,
                    "status": registration.payment_status,
                    "reference": registration.payment_reference_text,
                    "due_at": _iso(registration.payment_due_at),
                    "reported_account_last5": registration.reported_last5,
                    "reported_paid_on": registration.reported_paid_on.isoformat()
                    if registration.reported_paid_on
                    else None,
                    "reported_at": _iso(registration.reported_at),
                    "paid_amount": registration.paid_amount,
                    "paid_at": _iso(registration.paid_at),
                    "paid_via": registration.paid_via,
                    "refunded_amount": registration.refunded_amount,
                    "refunded_at": _iso(registration.refunded_at),
                }
                if registration.amount
                else None,
            }
            for registration in Registration.objects.filter(user=user)
            .select_related("event")
            .order_by("created_at", "id")
        ],
        "waiting_lists": [
            {
                "event_id": entry.event.public_id,
                "event_title": entry.event.title,
                "status": entry.status,
                "joined_at": _iso(entry.joined_at),
                "offered_at": _iso(entry.offered_at),
                "offer_expires_at": _iso(entry.expires_at),
                "ended_at": _iso(entry.ended_at),
            }
            for entry in WaitlistEntry.objects.filter(user=user)
            .select_related("event")
            .order_by("joined_at", "id")
        ],
        "check_ins": [
            {
                "event_id": check_in.registration.event.public_id,
                "event_title": check_in.registration.event.title,
                "checked_in_at": _iso(check_in.checked_in_at),
                "undone_at": _iso(check_in.undone_at),
            }
            for check_in in CheckIn.objects.filter(registration__user=user)
            .select_related("registration__event")
            .order_by("checked_in_at", "id")
        ],
        "notifications": [
            {
                "kind": notification.kind,
                "event_id": notification.event.public_id,
                "event_title": notification.event.title,
                "sent_to": notification.email,
                "status": notification.status,
                "created_at": _iso(notification.created_at),
                "sent_at": _iso(notification.sent_at),
            }
            for notification in Notification.objects.filter(user=user)
            .select_related("event")
            .order_by("created_at", "id")
        ],
        "access_tokens": [
            {
                "name": token.name,
                "prefix": token.prefix,
                "scopes": list(token.scopes),
                "created_at": _iso(token.created_at),
                "expires_at": _iso(token.expires_at),
                "last_used_at": _iso(token.last_used_at),
                "revoked_at": _iso(token.revoked_at),
            }
            for token in AccessToken.objects.filter(user=user).order_by("created_at", "id")
        ],
        "connected_agents": [
            {
                "client": agent.label,
                "scopes": agent.scopes,
                "granted_at": _iso(agent.granted_at),
                "last_used_at": _iso(agent.last_used_at),
            }
            for agent in list_connected_agents(user=user)
        ],
        "event_roles": [
            {
                "event_id": role.event.public_id,
                "event_title": role.event.title,
                "role": role.role,
                "added_at": _iso(role.added_at),
            }
            for role in EventStaff.objects.filter(user=user)
            .select_related("event")
            .order_by("added_at", "id")
        ],
        "activity": [
            {
                "action": row["action"],
                "mode": row["mode"],
                "outcome": row["outcome"],
                "event_id": row["event__public_id"],
                "client": row["client"],
                "time": _iso(row["created_at"]),
            }
            for row in Activity.objects.filter(user=user)
            .order_by("created_at", "id")
            .values("action", "mode", "outcome", "event__public_id", "client", "created_at")
            .iterator()
        ],
        "sign_ins": {
            "successful": [
                {
                    "time": _iso(row.attempt_time),
                    "address": row.ip_address,
                    "browser": row.user_agent,
                    "signed_out_at": _iso(row.logout_time),
                }
                for row in AccessLog.objects.filter(_sign_in_rows(user)).order_by("attempt_time", "id")
            ],
            "failed": [
                {
                    "time": _iso(row.attempt_time),
                    "address": row.ip_address,
                    "browser": row.user_agent,
                    "paused": row.locked_out,
                }
                for row in AccessFailureLog.objects.filter(_sign_in_rows(user)).order_by("attempt_time", "id")
            ],
            "failure_counts": [
                {
                    "last_attempt": _iso(row.attempt_time),
                    "address": row.ip_address,
                    "browser": row.user_agent,
                    "failures": row.failures_since_start,
                }
                for row in AccessAttempt.objects.filter(_sign_in_rows(user)).order_by("attempt_time", "id")
            ],
        },
    }


# ── deleting an account ───────────────────────────────────────────────────────────────────────


class LastSuperuser(ValueError):
    """The account is the site's last active superuser: nobody could run the site after it."""

    def __init__(self) -> None:
        super().__init__(
            _("This is the last superuser account: make another person a superuser before deleting it.")
        )


@dataclass(frozen=True)
class AccountDeleted:
    user_id: int
    registrations_cancelled: int  # through the use case: their seats went to the people waiting
    waiting_lists_left: int
    email_sent_to: str  # "" when the account had no address


def is_last_superuser(user: Any, *, lock: bool = False) -> bool:
    """Whether `user` is a superuser and no other active superuser exists (locking the superusers'
    rows when asked, so two deletions cannot each leave the other as the last one)."""
    if not user.is_superuser:
        return False
    superusers = get_user_model().objects.filter(is_superuser=True, is_active=True)
    if lock:
        superusers = superusers.select_for_update()
    return not [pk for pk in superusers.values_list("pk", flat=True) if pk != user.pk]


@transaction.atomic
def delete_account(*, user: Any, language: str | None = None, channel: Mode = Mode.UI) -> AccountDeleted:
    """Delete `user`'s account and the personal data kept with it, in one transaction, then (after the
    commit) send them a last e-mail that says so, in `language` (else the one of their latest e-mail).

    First, as the person would: their waiting-list places end (`leave_waitlist`: a seat offered to them
    goes to the next person) and each confirmed registration is cancelled (`cancel_registration`: the
    freed seat goes to the first person waiting, under the event's row lock). A registration the use
    case refuses (its event has started, or is no longer published) is not marked: it is deleted with
    the account below, and a seat of an unpublished event is offered when it is published again.
    Then: connected agents are revoked and every OAuth token, code and grant of the person deleted (a
    client they registered stays, without its owner); personal access tokens, sessions, saves,
    e-mails, event roles, connected-agent uses and their stateVersion are deleted; check-ins they did as
    staff and their Activity rows stay (for the organisers' record and the counts) with the person
    cleared; sign-in records under their username, their queued e-mails' task rows and the admin's
    entries about their rows are deleted (their name is taken out of entries about other rows); then
    the account. Refuses (`LastSuperuser`, nothing changed) for the last active superuser.

    Every write has its Activity row, through `channel` (the person's page `ui`, or `admin` when a
    superuser deletes the account): the leaving and cancelling are their rows', the rest is the
    declared write `delete_account` (`events.actions.recorded_write`), whose row is cleared of the
    person with the others.

    The confirmation is sent directly (`django.core.mail`) and not through the outbox: an outbox mail
    is a `Notification` row, which needs the account.
    """
    User = get_user_model()
    user = User.objects.select_for_update().get(pk=user.pk)
    if is_last_superuser(user, lock=True):
        raise LastSuperuser()
    visitor = Visitor(user=user)
    user_id, username, email = user.pk, user.get_username(), user.email
    if language is None:
        language = (
            Notification.objects.filter(user=user)
            .order_by("-created_at")
            .values_list("language", flat=True)
            .first()
            or settings.LANGUAGE_CODE
        )

    # Through their rows, for the person, by `channel`: each change has its Activity row (cleared of
    # the person below, as their older rows are); a refusal too, as any refused call.
    caller = Caller(visitor=visitor, channel=channel)
    left = 0
    for entry in WaitlistEntry.objects.filter(user=user, status__in=ACTIVE_WAITLIST).select_related("event"):
        # An event no longer published is refused: the entry goes with the account.
        data = {"event_id": entry.event.public_id}
        performed = perform(ACTIONS["leave_waitlist"], caller, data)
        left += performed.error is None and performed.result.was_waiting
    cancelled = 0
    confirmed = Registration.objects.filter(user=user, status__in=HOLDING_SEAT)
    for registration in confirmed.select_related("event"):
        # Started, or no longer published, is refused: the registration is deleted with the account.
        data = {"event_id": registration.event.public_id}
        performed = perform(ACTIONS["cancel_registration"], caller, data)
        cancelled += performed.error is None

    # The row of what goes with the account names nobody: its person is gone when it commits.
    with recorded_write("delete_account", Caller(visitor=Visitor(), channel=channel)):
        for agent in list_connected_agents(user=user):
            revoke_connected_agent(user=user, application_id=agent.application_id)
        for model in (
            get_refresh_token_model(),  # before the access tokens: each refresh token points at one
            get_access_token_model(),
            get_grant_model(),
            get_id_token_model(),
            get_device_grant_model(),
        ):
            model.objects.filter(user=user).delete()
        get_application_model().objects.filter(user=user).update(user=None)

        _forget_in_admin_history(user)
        AccessToken.objects.filter(user=user).delete()
        AgentUse.objects.filter(user=user).delete()
        SavedEvent.objects.filter(user=user).delete()
        Notification.objects.filter(user=user).delete()
        EventStaff.objects.filter(user=user).delete()
        CheckIn.objects.filter(staff=user).update(staff=None)
        CheckIn.objects.filter(undone_by=user).update(undone_by=None)
        Activity.objects.filter(user=user).update(user=None, visitor_token="")
        for model in (AccessAttempt, AccessLog, AccessFailureLog):
            model.objects.filter(_sign_in_rows(user)).delete()
        _delete_queued_mail(user_id)
        VisitorState.objects.filter(visitor_key=visitor.key).delete()
        # Its sessions end with it (accounts/sessions.py); by cascade: registrations (with their own
        # check-ins), waiting-list entries, …
        user.delete()

    if email:
        transaction.on_commit(lambda: _send_goodbye(email=email, username=username, language=language))
    return AccountDeleted(
        user_id=user_id, registrations_cancelled=cancelled, waiting_lists_left=left, email_sent_to=email
    )


def _delete_queued_mail(user_id: int) -> None:
    """The outbox's task rows of the person's e-mails (their arguments carry the address): those not
    running now (a running one finds the account gone and writes nothing)."""
    rows = DBTaskResult.objects.filter(
        task_path__in=QUEUED_MAIL_PATHS, args_kwargs__icontains=f":user-{user_id}"
    ).exclude(status=TaskResultStatus.RUNNING)
    mine = [row.pk for row in rows.only("pk", "args_kwargs") if _task_user_id(row.args_kwargs) == user_id]
    DBTaskResult.objects.filter(pk__in=mine).delete()


def _task_user_id(args_kwargs: Any) -> int | None:
    try:
        return int(args_kwargs["args"][1]["user_id"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _names(username: str, email: str) -> re.Pattern[str]:
    """The person's username or address as a whole word (a username is letters, digits and @.+-_)."""
    words = [re.escape(word) for word in (username, email) if word]
    return re.compile(rf"(?<![\w.@+-])(?:{'|'.join(words)})(?![\w.@+-])", re.IGNORECASE)


def _scrub(value: Any, names: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return names.sub(DELETED, value)
    if isinstance(value, list):
        return [_scrub(item, names) for item in value]
    if isinstance(value, dict):
        return {key: _scrub(item, names) for key, item in value.items()}
    return value


def _forget_in_admin_history(user: Any) -> None:
    """The admin's entries about the person's account and rows are deleted; in the others (an event's
    entry naming a staff member of an inline, say), the person's username and address are replaced."""
    own: list[tuple[type[models.Model], models.QuerySet]] = [
        (get_user_model(), get_user_model().objects.filter(pk=user.pk)),
        (Registration, Registration.objects.filter(user=user)),
        (WaitlistEntry, WaitlistEntry.objects.filter(user=user)),
        (SavedEvent, SavedEvent.objects.filter(user=user)),
        (Notification, Notification.objects.filter(user=user)),
        (EventStaff, EventStaff.objects.filter(user=user)),
        (AccessToken, AccessToken.objects.filter(user=user)),
    ]
    about = Q(pk__in=[])
    for model, rows in own:
        ids = [str(pk) for pk in rows.values_list("pk", flat=True)]
        if ids:
            content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
            about |= Q(content_type=content_type, object_id__in=ids)
    LogEntry.objects.filter(about).delete()

    names = _names(user.get_username(), user.email)
    mentions = Q(pk__in=[])
    for word in filter(None, (user.get_username(), user.email)):
        mentions |= Q(object_repr__icontains=word) | Q(change_message__icontains=word)
    for entry in LogEntry.objects.filter(mentions).exclude(user=user):
        try:
            message = json.dumps(_scrub(json.loads(entry.change_message), names))
        except ValueError:  # a plain-text message (older entries)
            message = names.sub(DELETED, entry.change_message)
        LogEntry.objects.filter(pk=entry.pk).update(
            object_repr=names.sub(DELETED, entry.object_repr)[:200], change_message=message
        )


def _send_goodbye(*, email: str, username: str, language: str) -> None:
    """The last e-mail: the account is deleted. Sent once, after the commit; a failure is logged
    (without the address) and not retried, since nothing of the person is kept to retry with."""
    with translation.override(language):
        subject = _("Your account at %(site)s is deleted") % {"site": settings.SITE_NAME}
        body = _(
            "Hello %(username)s,\n\n"
            "your account at %(site)s is deleted, as was asked, with the personal data kept with it: "
            "your registrations were cancelled, you left the waiting lists, your access tokens and "
            "connected agents no longer work and you are signed out everywhere.\n\n"
            "This is the last e-mail we send you. If you did not ask for this, reply to this e-mail."
        ) % {"username": username, "site": settings.SITE_NAME}
    try:
        EmailMessage(subject=subject, body=body, to=[email]).send()
    except Exception as error:  # the mail server: nothing to retry with, so say so and go on
        logger.warning("The confirmation of an account deletion could not be sent: %s", type(error).__name__)


# ── retention ─────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Cleared:
    sign_in_records: int
    visitor_tokens: int
    notifications: int
    queued_mail_rows: int
    answers: int = 0  # registrations whose answers were emptied
    payer_details: int = 0  # registrations and bank statement rows whose payer details were blanked


@transaction.atomic
def clear_expired_personal_data(*, now: datetime | None = None) -> Cleared:
    """Remove or clear what is past its period (settings RETENTION_*_DAYS), for everyone:

    - sign-in records (django-axes' attempts, logs and failure logs) older than
      RETENTION_SIGN_IN_ATTEMPTS_DAYS: deleted (a pause lasts minutes; none is lifted early);
    - the anonymous visitor's token on Activity rows older than RETENTION_VISITOR_TOKENS_DAYS:
      cleared, the row kept (the counts and the dashboard read the rest);
    - sent e-mails older than RETENTION_NOTIFICATIONS_DAYS: their address and last error cleared, the
      row kept (its key keeps the mail from going twice; the admin and the person's export list it),
      and the finished outbox task rows of that age deleted (their arguments carry the address);
    - the answers to an event's registration questions, RETENTION_ANSWERS_DAYS after the event ended:
      emptied (the registration stays, for the organisers' record of who came);
    - the payer's details, RETENTION_PAYMENTS_DAYS after the event ended: the account digits and date
      a person reported of their transfer, and a bank statement row's payer and account digits (a row
      of no event: that long after its import), blanked; amounts and states stay.
    """
    now = now or timezone.now()

    def before(setting: str) -> datetime:
        return now - timedelta(days=getattr(settings, setting))

    # The site's own work: the declared write, its Activity row when it cleared anything.
    with recorded_write(
        "clear_expired_personal_data", system_caller("clear_expired_personal_data")
    ) as record:
        attempts_before = before("RETENTION_SIGN_IN_ATTEMPTS_DAYS")
        records = sum(
            model.objects.filter(attempt_time__lt=attempts_before).delete()[0]
            for model in (AccessAttempt, AccessLog, AccessFailureLog)
        )
        tokens = (
            Activity.objects.filter(created_at__lt=before("RETENTION_VISITOR_TOKENS_DAYS"))
            .exclude(visitor_token="")
            .update(visitor_token="")
        )
        mail_before = before("RETENTION_NOTIFICATIONS_DAYS")
        notifications = (
            Notification.objects.filter(status=NotificationStatus.SENT, sent_at__lt=mail_before)
            .exclude(email="", last_error="")
            .update(email="", last_error="")
        )
        queued, _ = DBTaskResult.objects.filter(
            task_path__in=QUEUED_MAIL_PATHS,
            status__in=[TaskResultStatus.SUCCESSFUL, TaskResultStatus.FAILED],
            finished_at__lt=mail_before,
        ).delete()
        answers = (
            Registration.objects.filter(event__ends_at__lt=before("RETENTION_ANSWERS_DAYS"))
            .exclude(answers={})
            .update(answers={})
        )
        payments_before = before("RETENTION_PAYMENTS_DAYS")
        payer_details = (
            Registration.objects.filter(event__ends_at__lt=payments_before)
            .exclude(reported_last5="", reported_paid_on=None)
            .update(reported_last5="", reported_paid_on=None)
        )
        old_rows = Q(event__ends_at__lt=payments_before) | Q(
            event__isnull=True, imported_at__lt=payments_before
        )
        payer_details += (
            BankStatementRow.objects.filter(old_rows)
            .exclude(payer="", account_last5="")
            .update(payer="", account_last5="")
        )
        record.changed = bool(records or tokens or notifications or queued or answers or payer_details)
    return Cleared(
        sign_in_records=records,
        visitor_tokens=tokens,
        notifications=notifications,
        queued_mail_rows=queued,
        answers=answers,
        payer_details=payer_details,
    )
