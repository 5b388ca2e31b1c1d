"""What a personal access token may do on the API: one scope per kind of call (docs/agent-contract.md).

A request signed in by session is not limited here (the use cases decide); a request made with a token
(`request.auth` carries `scopes`) is refused with INSUFFICIENT_SCOPE before the use case runs.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from events.errors import InsufficientScope

READ = "events:read"
SAVED_WRITE = "saved:write"
REGISTRATIONS_WRITE = "registrations:write"


class TokenScope(BasePermission):
    """Reads need `events:read`; a view names the scope of its writes in `write_scope`."""

    def has_permission(self, request: Request, view: Any) -> bool:
        scopes = getattr(request.auth, "scopes", None)
        if scopes is None:
            return True
        needed = READ if request.method in ("GET", "HEAD", "OPTIONS") else getattr(view, "write_scope", None)
        if needed is None or needed not in scopes:
            raise InsufficientScope(extra={"scope": needed or ""})
        return True
