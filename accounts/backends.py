"""Sign-in by username and password, and the person of a session without a second read.

`SessionUserBackend` is Django's `ModelBackend`, with one difference: while `accounts.middleware`
asks Django's `auth.get_user` for a request's person, the person that the session engine has already
read with the session row (`core.sessions`) is the answer, if it is the one the session names. Any
other case (a session saved before the column existed, a mismatch, no request in progress) reads the
person as `ModelBackend` does. Django then checks the session's hash and the account's `is_active`
exactly as it always does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.contrib.auth.backends import ModelBackend

_session: ContextVar[Any] = ContextVar("accounts_session", default=None)


@contextmanager
def reading_person_of(session: Any) -> Iterator[None]:
    """Within this block, `SessionUserBackend.get_user` may take the person `session` has loaded."""
    token = _session.set(session)
    try:
        yield
    finally:
        _session.reset(token)


class SessionUserBackend(ModelBackend):
    def get_user(self, user_id: Any):
        loaded = getattr(_session.get(), "loaded_user", None)
        if loaded is not None and loaded.pk == user_id:
            return loaded if self.user_can_authenticate(loaded) else None
        return super().get_user(user_id)
