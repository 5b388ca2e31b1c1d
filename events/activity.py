"""Record one `Activity` row per use-case call, in one place (a decorator on the use cases).

The row is written after the use case's own transaction has committed or rolled back, so a refused
call is recorded too and a recorded success is never rolled back with a later failure.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.db import DatabaseError

from .choices import Mode
from .errors import DomainError
from .models import Activity, Event
from .visitors import Visitor

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def outcome_of(result: Any) -> str:
    """A result may name its own outcome (e.g. ALREADY_SAVED); otherwise it is OK."""
    return getattr(result, "outcome", "OK")


def records_activity(action: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(func)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            mode = kwargs.get("mode", Mode.API)
            visitor = kwargs.get("visitor")
            event_id = kwargs.get("event_id")
            try:
                result = func(*args, **kwargs)
            except DomainError as error:
                _record(action, mode, error.reason, visitor, event_id)
                raise
            _record(action, mode, outcome_of(result), visitor, event_id)
            return result

        return wrapper

    return decorate


def _record(action: str, mode: Any, outcome: str, visitor: Any, event_id: Any) -> None:
    visitor = visitor if isinstance(visitor, Visitor) else Visitor()
    try:
        event = (
            Event.objects.filter(public_id=event_id).only("pk").first() if isinstance(event_id, str) else None
        )
        Activity.objects.create(
            action=action,
            mode=mode if mode in Mode.values else Mode.API,
            outcome=outcome[:40],
            event=event,
            user=visitor.user,
            visitor_token=visitor.token,
        )
    except DatabaseError:
        # Losing an activity row must not turn a served answer into a failure.
        logger.exception("Could not record activity %s", action)
