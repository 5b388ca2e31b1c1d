"""The person's connected agents: each client they allowed, what it may do, and taking that back.

A grant here is everything one client holds for one person (django-oauth-toolkit keeps it as access
and refresh tokens): listed per client, revoked per client, all at once. After a revoke the client's
next call at `/mcp` gets 401, and it must ask the person again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from events.scopes import Scope

from ..models import AgentUse

#: How often "last used" is written at most per token (as for personal access tokens).
LAST_USED_RESOLUTION = timedelta(minutes=1)


def client_label(application: Any) -> str:
    """A connected client's name and the host of its client id (a metadata document's URL), as the
    consent page, Connected agents and the dashboard show it."""
    host = urlsplit(application.client_id).hostname if "://" in application.client_id else None
    name = application.name or application.client_id[:40]
    return f"{name} ({host})" if host and host not in name else name


@dataclass(frozen=True)
class ConnectedAgent:
    application_id: int
    label: str
    unverified: bool
    scopes: list[str]
    granted_at: datetime
    last_used_at: datetime | None


def _live(user: Any):
    now = timezone.now()
    access = get_access_token_model().objects.filter(user=user, application__isnull=False, expires__gt=now)
    refresh = get_refresh_token_model().objects.filter(user=user, revoked__isnull=True)
    return access, refresh


def list_connected_agents(*, user: Any) -> list[ConnectedAgent]:
    """The clients that can act for `user` now (a live access token or refresh token), newest grant first."""
    access, refresh = _live(user)
    Application = get_application_model()
    by_app: dict[int, dict[str, Any]] = {}
    for token in [*access.select_related("application"), *refresh.select_related("application")]:
        entry = by_app.setdefault(
            token.application_id,
            {"application": token.application, "scopes": set(), "granted": token.created},
        )
        entry["granted"] = min(entry["granted"], token.created)
        if hasattr(token, "scope"):  # an access token
            entry["scopes"] |= set(token.scope.split())
    used = dict(
        AgentUse.objects.filter(user=user, application_id__in=by_app).values_list(
            "application_id", "last_used_at"
        )
    )
    agents = [
        ConnectedAgent(
            application_id=app_id,
            label=client_label(entry["application"]),
            unverified=entry["application"].registration_source == Application.RegistrationSource.DCR,
            scopes=[scope for scope in Scope.values if scope in entry["scopes"]],
            granted_at=entry["granted"],
            last_used_at=used.get(app_id),
        )
        for app_id, entry in by_app.items()
    ]
    return sorted(agents, key=lambda agent: agent.granted_at, reverse=True)


@transaction.atomic
def revoke_connected_agent(*, user: Any, application_id: int) -> bool:
    """Take back everything client `application_id` holds for `user`; False when it held nothing."""
    access, refresh = _live(user)
    refresh_tokens = list(refresh.filter(application_id=application_id).select_for_update())
    for token in refresh_tokens:
        token.revoke()  # and its access token
    deleted, _ = access.filter(application_id=application_id).delete()
    get_grant_model().objects.filter(user=user, application_id=application_id).delete()
    return bool(refresh_tokens or deleted)


def note_used(token: Any) -> None:
    """Note that `token` acted for its person now: once a minute per token at most (the cache says
    whether this minute was noted already), so a busy agent does not turn every read into a write."""
    if not cache.add(f"agent-used:{token.pk}", True, LAST_USED_RESOLUTION.total_seconds()):
        return
    AgentUse.objects.update_or_create(
        user_id=token.user_id, application_id=token.application_id, defaults={"last_used_at": timezone.now()}
    )
