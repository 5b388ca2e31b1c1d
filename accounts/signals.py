"""Merge an anonymous visitor's saved events into the account they sign in to; queue the session sweep.

The session token survives the session-key rotation that `login()` performs, so it is still in the
session when `user_logged_in` fires (for sign-in and for the automatic sign-in after sign-up).
"""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from core.visitors import SESSION_TOKEN_KEY, Mode, Visitor
from events.actions import ACTIONS, Caller, perform


@receiver(user_logged_in, dispatch_uid="accounts_merge_saved_events")
def merge_saved_events(sender, request, user, **kwargs) -> None:
    """The sign-in performs `merge_saved_events` for the person signing in (a page: channel `ui`), so
    the saves their session made join their account with the row's Activity row."""
    session = getattr(request, "session", None)
    if session is None:
        return
    token = session.get(SESSION_TOKEN_KEY, "")
    if token:
        caller = Caller(visitor=Visitor(user=user), channel=Mode.UI)
        perform(ACTIONS["merge_saved_events"], caller, {"token": token})
        session.pop(SESSION_TOKEN_KEY, None)


def schedule_session_sweep(sender, using: str = "default", **kwargs) -> None:
    """After `migrate` (every deploy, and `make run`): make sure the periodic clean-ups are queued.

    Connected by `AccountsConfig.ready` for this app's post_migrate only.
    """
    from .tasks import (  # noqa: PLC0415 (circular: tasks ↔ signals)
        schedule_oauth_sweep,
        schedule_retention_sweep,
        schedule_sweep,
    )

    schedule_sweep()
    schedule_oauth_sweep()
    schedule_retention_sweep()
