"""The periodic clean-ups of accounts, on the task worker (`manage.py db_worker`).

Django deletes an expired session only when someone runs `manage.py clearsessions`, and
django-oauth-toolkit an expired token only on `manage.py cleartokens`; nothing would, so both tables
would keep every row for ever. One task does what the first command does every SESSION_SWEEP_HOURS;
another, daily, what the second does, and deletes the dynamically registered clients nobody used for
OAUTH_UNUSED_CLIENT_DAYS. A third, daily, removes or clears the personal data past its retention period
(RETENTION_*_DAYS; accounts/privacy.py). Each queues its next run.
"""

from __future__ import annotations

from datetime import timedelta
from importlib import import_module

from django.conf import settings
from django.tasks import task

from core.tasks import keep_one_queued


@task()
def clear_expired_sessions() -> None:
    """Delete the expired sessions (the session engine's own `clear_expired`), then queue the next run."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
    schedule_sweep(after=timedelta(hours=settings.SESSION_SWEEP_HOURS))


def schedule_sweep(*, after: timedelta = timedelta(0)) -> None:
    """Make sure one run is queued (called after `migrate` and by each run for the next one)."""
    keep_one_queued(clear_expired_sessions, after=after)


OAUTH_SWEEP = timedelta(hours=24)


@task()
def clear_oauth_leftovers() -> None:
    """Delete expired OAuth tokens and codes (the toolkit's `clear_expired`) and unused registrations,
    then queue the next run."""
    from oauth2_provider.models import clear_expired  # noqa: PLC0415 (app loading: the toolkit's models)

    from .oauth.clients import prune_unused_clients  # noqa: PLC0415 (app loading: the toolkit's models)

    clear_expired()
    prune_unused_clients()
    schedule_oauth_sweep(after=OAUTH_SWEEP)


def schedule_oauth_sweep(*, after: timedelta = timedelta(0)) -> None:
    keep_one_queued(clear_oauth_leftovers, after=after)


RETENTION_SWEEP = timedelta(hours=24)


@task()
def clear_expired_personal_data() -> None:
    """Remove or clear what is past its retention period (RETENTION_*_DAYS: sign-in records, visitors'
    tokens on Activity rows, sent e-mails' addresses; `accounts.privacy`), then queue the next run."""
    from .privacy import clear_expired_personal_data as clear  # noqa: PLC0415 (app loading: axes' and the task backend's models)

    clear()
    schedule_retention_sweep(after=RETENTION_SWEEP)


def schedule_retention_sweep(*, after: timedelta = timedelta(0)) -> None:
    keep_one_queued(clear_expired_personal_data, after=after)
