"""A use case's transaction, which the action layer opens itself for a write (`events.actions.perform`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction


def atomic_use_case[F: Callable[..., Any]](use_case: F) -> F:
    """`transaction.atomic` around a use case, keeping the bare function as `inside_transaction`.

    A write made through `perform` runs in a transaction `perform` opens, so that its Activity row
    commits with it; there the use case's own `atomic` would only be a savepoint (SAVEPOINT and
    RELEASE, two more round trips per write), so `perform` calls `inside_transaction` instead. Called
    directly (a task, another use case, a test), the use case opens its own transaction as before.
    """
    atomic = transaction.atomic(use_case)
    atomic.inside_transaction = use_case  # type: ignore[attr-defined]
    return atomic
