"""The error envelope of DESIGN.md §4, built in one place for the API and the tool path."""

from __future__ import annotations

from typing import Any

from events.errors import DomainError


def error_envelope(error: DomainError, *, state_version: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "ok": False,
        "code": error.code,
        "reason": error.reason,
        "message": error.message,
        "nextAction": error.next_action,
        "retryable": error.retryable,
        "uiUpdated": False,
    }
    body.update(error.extra)
    if state_version is not None:
        body["stateVersion"] = state_version
    return body
