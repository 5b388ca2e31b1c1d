"""The scopes an agent may ask for are the site's own (`events.scopes.Scope`), named once there."""

from __future__ import annotations

from typing import Any

from oauth2_provider.scopes import BaseScopes

from events.scopes import READ, Scope


class SiteScopes(BaseScopes):
    """A client that names no scope gets `events:read`: it can read, and asks again to write."""

    def get_all_scopes(self) -> dict[str, str]:
        return {scope.value: str(scope.label) for scope in Scope}

    def get_available_scopes(self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any):
        return list(Scope.values)

    def get_default_scopes(self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any):
        return [READ]
