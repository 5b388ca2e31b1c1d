"""What a personal access token may do: one scope per kind of call (docs/agent-contract.md), named
once here. A request signed in by session is not limited by scopes (the use cases decide); an action
checks its row's scope (`events.actions.perform`), and the API's plain reads check `TokenScope`.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.errors import InsufficientScope


class Scope(models.TextChoices):
    """What a token may do. Every signed-in person holds the first three rights; `checkin:write` is only
    as good as its person's part at the door (event staff), and `registrations:manage` as their part in
    running an event (its managers), which the actions check as well."""

    EVENTS_READ = "events:read", _("Read events and my lists")
    SAVED_WRITE = "saved:write", _("Save and unsave events")
    REGISTRATIONS_WRITE = "registrations:write", _("Register, cancel and use waiting lists")
    CHECKIN_WRITE = "checkin:write", _("Check people in at the door of events you staff")
    REGISTRATIONS_MANAGE = (
        "registrations:manage",
        _("Approve, decline and annotate the registrations of events you manage"),
    )
    PAYMENTS_WRITE = "payments:write", _("Confirm payments for events you manage")


READ = Scope.EVENTS_READ.value
SAVED_WRITE = Scope.SAVED_WRITE.value
REGISTRATIONS_WRITE = Scope.REGISTRATIONS_WRITE.value
CHECKIN_WRITE = Scope.CHECKIN_WRITE.value
REGISTRATIONS_MANAGE = Scope.REGISTRATIONS_MANAGE.value
PAYMENTS_WRITE = Scope.PAYMENTS_WRITE.value

#: The rights a visitor holds without an account, through their browser session alone: reading the
#: catalogue and keeping a saved list. An action of any other scope acts for a person (its use case
#: answers AUTH_REQUIRED without one). The OpenAPI document says per operation whether it works
#: without signing in from this (`events/api/schema.py`); `tests/api/test_openapi_security.py` and
#: `tests/fuzz/test_api_security.py` hold the document to what the API does.
WITHOUT_ACCOUNT = frozenset({READ, SAVED_WRITE})


class TokenScope(BasePermission):
    """The API's plain reads (the visitor's own lists) need `events:read`; nothing else is served by
    a view with this permission (the actions check their own row's scope)."""

    @staticmethod
    def needed(method: str) -> str:
        """The scope a token needs for a request of `method` ("": none will do). The OpenAPI document
        names it for the plain reads from here too."""
        return READ if method.upper() in ("GET", "HEAD", "OPTIONS") else ""

    def has_permission(self, request: Request, view: Any) -> bool:
        scopes = getattr(request.auth, "scopes", None)
        if scopes is None:
            return True
        needed = self.needed(request.method or "")
        if not needed or needed not in scopes:
            raise InsufficientScope(extra={"scope": needed})
        return True
