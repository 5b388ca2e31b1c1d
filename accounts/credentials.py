"""One authentication path for every bearer token: a personal access token (`are_…`, made on the
Access tokens page) or an OAuth access token (issued to a connected agent after the person's consent).

Both come to one `Credential`: the person, the scopes, and which client holds it. The one scope check
is the action's (`events.actions.perform`, against `Credential.scopes`). A personal access token works
on every resource of the site; an OAuth token only on the resource it was issued for (RFC 8707), so a
token for `/mcp` is no token at all on the API.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from .oauth.grants import client_label, note_used
from .tokens import PREFIX, authenticate_token


@dataclass(frozen=True)
class Credential:
    user: Any
    scopes: frozenset[str]
    #: The connected client, as people read it ("Claude (claude.ai)"); "" for a personal access token.
    client: str = ""


def authenticate_bearer(raw: str, *, resource: str) -> Credential | None:
    """The credential `raw` stands for at `resource` (the URL the request was made to, as the site
    names it), or None: unknown, expired, revoked, an inactive person, or a token for another resource."""
    if raw.startswith(PREFIX):
        token = authenticate_token(raw)
        return Credential(user=token.user, scopes=frozenset(token.scopes)) if token is not None else None
    checksum = hashlib.sha256(raw.encode()).hexdigest()
    found = (
        get_access_token_model()
        .objects.select_related("application", "user")
        .filter(token_checksum=checksum, user__isnull=False, application__isnull=False)
        .first()
    )
    if found is None or found.expires <= timezone.now() or not found.user.is_active:
        return None
    if list(found.resource or []) != [resource]:
        return None
    note_used(found)
    return Credential(
        user=found.user, scopes=frozenset(found.scope.split()), client=client_label(found.application)
    )
