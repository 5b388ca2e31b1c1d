"""A signed-in session made without a sign-in form, for the bench's visitors and its tests.

Written as Django's `login()` leaves it (the user, the backend that authenticated them, the hash of
their password), so the session middleware and `get_user` accept it as theirs.
"""

from __future__ import annotations

from importlib import import_module

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

#: The backend a password sign-in goes through (axes' own backend only counts failures).
SIGN_IN_BACKEND = "django.contrib.auth.backends.ModelBackend"


def signed_in_session(user) -> str:
    """Create a stored session in which `user` is signed in; return its key (the cookie's value)."""
    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = SIGN_IN_BACKEND
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key
