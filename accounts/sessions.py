"""The session engine (`SESSION_ENGINE = "accounts.sessions"`): the session and its person in one read.

Django's database engine reads the session row, then `AuthenticationMiddleware` reads the person it
names: two statements before a signed-in request does any work. This engine keeps the person's id in a
column of the session row (written whenever the session is saved) and reads the row joined to its
person. `accounts.backends.SessionUserBackend` then hands Django's own `auth.get_user` that person, so
the session's hash is still checked by Django, against the password hash read in the same statement.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import SuspiciousOperation
from django.utils import timezone


class SessionStore(DatabaseSessionStore):
    #: The person the loaded row names (with their current password hash), or None.
    loaded_user: Any = None

    @classmethod
    def get_model_class(cls):
        from .models import Session  # noqa: PLC0415 (circular: models ↔ sessions)

        return Session

    def _get_session_from_db(self):
        """Django's own lookup (an unknown or expired key is no session), joined to the person."""
        from .models import Session  # noqa: PLC0415 (circular: models ↔ sessions)

        try:
            # The person with the two one-row things every signed-in page may show (the reminder setting,
            # the calendar feed on My events): one statement, not three.
            row = Session.objects.select_related("user", "user__preferences", "user__calendar_feed").get(
                session_key=self.session_key, expire_date__gt=timezone.now()
            )
        except (Session.DoesNotExist, SuspiciousOperation) as error:
            if isinstance(error, SuspiciousOperation):
                logging.getLogger(f"django.security.{type(error).__name__}").warning(str(error))
            self._session_key = None
            self.loaded_user = None
            return None
        self.loaded_user = row.user
        return row

    def create_model_instance(self, data: dict[str, Any]):
        from .models import Session  # noqa: PLC0415 (circular: models ↔ sessions)

        row = super().create_model_instance(data)
        assert isinstance(row, Session)
        row.user_id = _user_id(data)
        return row


def _user_id(data: dict[str, Any]) -> int | None:
    try:
        return int(data[SESSION_KEY])
    except (KeyError, TypeError, ValueError):
        return None
