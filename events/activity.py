"""Record one `Activity` row per use-case call, in one place (a decorator on the use cases).

`mode=None` is a call the site makes on its own behalf (re-drawing a page after a write, whose row was
recorded by the write): it is not recorded, so one action is one row.

The row is written after the use case's own transaction has committed or rolled back, so a refused
call is recorded too and a recorded success is never rolled back with a later failure.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from django.db import DatabaseError
from django.db.models import Subquery

from .choices import Mode
from .errors import DomainError
from .models import Activity, Event
from .visitors import Visitor

logger = logging.getLogger(__name__)


def outcome_of(result: Any) -> str:
    """A result may name its own outcome (e.g. ALREADY_SAVED); otherwise it is OK."""
    return getattr(result, "outcome", "OK")


def records_activity[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """Record each call of the use case `func` as one row; the action is the use case's own name,
    which is also its tool's name (one name per action, checked by tests/events/test_names.py)."""
    action = func.__name__

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        mode = kwargs.get("mode", Mode.API)
        if mode is None:  # a page re-drawn after a call that was recorded already
            return func(*args, **kwargs)
        visitor = kwargs.get("visitor")
        event_id = kwargs.get("event_id")
        try:
            result = func(*args, **kwargs)
        except DomainError as error:
            _record(action, mode, error.reason, visitor, _event_by_id(event_id))
            raise
        event = getattr(result, "event", None)
        _record(action, mode, outcome_of(result), visitor, event.pk if event else _event_by_id(event_id))
        return result

    return wrapper


def _event_by_id(event_id: Any) -> Subquery | None:
    """The event's pk looked up inside the INSERT itself (no query of its own); None when no id."""
    if not isinstance(event_id, str):
        return None
    return Subquery(Event.objects.filter(public_id=event_id).values("pk")[:1])


def _record(action: str, mode: Any, outcome: str, visitor: Any, event: int | Subquery | None) -> None:
    visitor = visitor if isinstance(visitor, Visitor) else Visitor()
    try:
        Activity.objects.create(
            action=action,
            mode=mode if mode in Mode.values else Mode.API,
            outcome=outcome[:40],
            event_id=event,
            user=visitor.user,
            visitor_token=visitor.token,
        )
    except DatabaseError:
        # Losing an activity row must not turn a served answer into a failure.
        logger.exception("Could not record activity %s", action)
