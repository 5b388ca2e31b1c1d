"""A person's sessions end with their account.

Django's session (`django.contrib.sessions`, read through the cache by the `cached_db` engine) names
its person only inside its signed data, so finding a person's sessions reads each one: a cost in the
number of sessions, paid once per deleted account. Each is deleted through the engine
(`SessionStore.delete`), from the database and from its cache, so a cached copy cannot outlive it.
"""

from __future__ import annotations

import importlib
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session


def end_sessions(user_id: Any) -> int:
    """Delete every session signed in as person `user_id`; how many there were."""
    store_class = importlib.import_module(settings.SESSION_ENGINE).SessionStore
    codec = store_class()
    person = str(user_id)
    rows = Session.objects.values_list("session_key", "session_data").iterator(chunk_size=2000)
    mine = [key for key, data in rows if codec.decode(data).get(SESSION_KEY) == person]
    for key in mine:
        store_class(session_key=key).delete()
    return len(mine)


def end_sessions_of_deleted_person(sender: Any, instance: Any, **kwargs: Any) -> None:
    """`post_delete` of the person model (connected by `AccountsConfig.ready`)."""
    end_sessions(instance.pk)
