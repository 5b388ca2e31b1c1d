"""Who is asking: the signed-in user, or an anonymous visitor's session token, and by which channel.

Use cases take a `Visitor` rather than a request, so the pages, the API and the tool path give them
the same thing and the rules never depend on where a call came from.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.db import models
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _


class Mode(models.TextChoices):
    """Who made a request: a person on a page, an agent through a tool (in the browser, or headless over
    MCP), a program on the API, or an organiser in the admin. The channel a call entered by."""

    UI = "ui", _("Person on a page")
    AGENT = "agent", _("Agent tool")
    API = "api", _("API client")
    ADMIN = "admin", _("Organiser in the admin")
    MCP = "mcp", _("Agent over MCP")


SESSION_TOKEN_KEY = "visitor_token"
MODE_HEADER = "X-Client-Mode"


@dataclass(frozen=True)
class Visitor:
    user: User | None = None  # Django's User: the project keeps the default AUTH_USER_MODEL
    token: str = ""

    @property
    def is_authenticated(self) -> bool:
        return self.user is not None

    @property
    def key(self) -> str:
        """Stable key for per-visitor state; empty for a visitor with neither account nor token."""
        if self.user is not None:
            return f"user:{self.user.pk}"
        return f"token:{self.token}" if self.token else ""


def visitor_from_request(request: HttpRequest, *, create_token: bool = False) -> Visitor:
    """The request's visitor. `create_token` gives an anonymous visitor a token (needed to save)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and not isinstance(user, AnonymousUser):
        return Visitor(user=user)
    session = getattr(request, "session", None)
    if session is None:
        return Visitor()
    token = session.get(SESSION_TOKEN_KEY, "")
    if not token and create_token:
        token = secrets.token_urlsafe(24)
        session[SESSION_TOKEN_KEY] = token
    return Visitor(token=token)


#: Mode.values, which Django builds anew at each read.
MODES = frozenset(Mode.values)


def client_mode(request: HttpRequest, *, default: Mode) -> Mode:
    """The mode a request declares in `X-Client-Mode`; anything unknown falls back to `default`."""
    raw = request.headers.get(MODE_HEADER, "").strip().lower()
    return Mode(raw) if raw in MODES else default
