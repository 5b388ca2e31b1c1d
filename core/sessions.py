"""The session engine (`SESSION_ENGINE = "core.sessions"`): the session and its person in one read.

Django's database engine reads the session row, then `AuthenticationMiddleware` reads the person it
names: two statements before a signed-in request does any work. This engine keeps the person's id in a
`user` column of the session row (written whenever the session is saved) and reads the row joined to
its person. `accounts.backends.SessionUserBackend` then hands Django's own `auth.get_user` that person,
so the session's hash is still checked by Django, against the password hash read in the same statement.

The boundary with Django's internals: beside the documented hooks for a database-backed engine
(`get_model_class`, `create_model_instance`), it overrides `_get_session_from_db`, a private method of
`django.contrib.sessions.backends.db.SessionStore`. Nothing else in the site touches them. The row is
the model `SESSION_MODEL` names (`accounts.Session`, as `AUTH_USER_MODEL` names the person's); what
is read with it, its `read_with` relations. `make bench` compares this engine with Django's
(`BENCH_SESSION_ENGINE`, bench/README.md).
"""

from __future__ import annotations

import logging
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.core.exceptions import SuspiciousOperation
from django.utils import timezone


class SessionStore(DatabaseSessionStore):
    #: The person the loaded row names (with their current password hash), or None.
    loaded_user: Any = None

    @classmethod
    def get_model_class(cls):
        return apps.get_model(settings.SESSION_MODEL)

    def _get_session_from_db(self):
        """Django's own lookup (an unknown or expired key is no session), joined to the person."""
        model: Any = self.model  # SESSION_MODEL: a session row with `user` and `read_with`
        try:
            row = model.objects.select_related(*model.read_with).get(
                session_key=self.session_key, expire_date__gt=timezone.now()
            )
        except (model.DoesNotExist, SuspiciousOperation) as error:
            if isinstance(error, SuspiciousOperation):
                logging.getLogger(f"django.security.{type(error).__name__}").warning(str(error))
            self._session_key = None
            self.loaded_user = None
            return None
        self.loaded_user = row.user
        return row

    def create_model_instance(self, data: dict[str, Any]):
        row: Any = super().create_model_instance(data)
        row.user_id = _user_id(data)
        return row


def _user_id(data: dict[str, Any]) -> int | None:
    try:
        return int(data[SESSION_KEY])
    except (KeyError, TypeError, ValueError):
        return None
