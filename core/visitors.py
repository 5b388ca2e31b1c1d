"""Who is asking: the signed-in user, or an anonymous visitor's session token, and by which channel.

Use cases take a `Visitor` rather than a request, so the pages, the API and the tool path give them
the same thing and the rules never depend on where a call came from.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext_lazy as _


class Mode(models.TextChoices):
    """Who made a request: a person on a page, an agent through a tool (in the browser, or headless over
    MCP), a program on the API, an organiser in the admin, or the site itself (its worker's sweeps, a
    sign-in's merge of saves: the declared system actor's work). The channel a call entered by."""

    UI = "ui", _("Person on a page")
    AGENT = "agent", _("Agent tool")
    API = "api", _("API client")
    ADMIN = "admin", _("Organiser in the admin")
    MCP = "mcp", _("Agent over MCP")
    SYSTEM = "system", _("The site itself")


SESSION_TOKEN_KEY = "visitor_token"
MODE_HEADER = "X-Client-Mode"


@dataclass(frozen=True)
class Visitor:
    user: User | None = None  # Django's User: the project keeps the default AUTH_USER_MODEL
    token: str = ""
    #: The site itself, acting for its operator (a management command): a declared system actor, never
    #: a request's visitor. `SYSTEM` is the one; the use cases that allow it say so.
    system: bool = False

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


class VisitorMiddleware:
    """`request.visitor`: who is asking, resolved on first use and then kept for the request, as
    Django's `request.user` is (and django-htmx's `request.htmx`). It reads `request.user`, so it comes
    after the authentication middleware; on the API, DRF's authentication has run before a view reads
    it (a DRF `Request` hands the attribute on to Django's)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.visitor = SimpleLazyObject(lambda: visitor_from_request(request))  # type: ignore[attr-defined]
        return self.get_response(request)


def with_token(request: Any) -> Visitor:
    """The request's visitor, given a session token now when they have neither account nor token (an
    anonymous save needs one); `request.visitor` is that visitor from then on."""
    visitor: Visitor = request.visitor
    if visitor.user is None and not visitor.token and getattr(request, "session", None) is not None:
        visitor = visitor_from_request(request, create_token=True)
        getattr(request, "_request", request).visitor = visitor  # a DRF Request: Django's below it
    return visitor


#: The declared system actor: what the site's operator does from the shell (`manage.py add_event_staff`,
#: channel `admin`) and what the site does on its own (the worker's sweeps, channel `system`).
SYSTEM = Visitor(system=True)


#: The channels a request may claim (`X-Client-Mode`): Mode.values, which Django builds anew at each
#: read, but `system`, which no request is.
MODES = frozenset(Mode.values) - {Mode.SYSTEM.value}


def claimed_mode(request: HttpRequest | Any) -> str:
    """What a request says it is in `X-Client-Mode` ("" when nothing known): recorded beside the
    Activity row's channel as the caller's claim, never taken for the channel, which the interface the
    request entered by fixes (a tool call `agent`, a page's post `ui`, the API `api`)."""
    raw = request.headers.get(MODE_HEADER, "").strip().lower()
    return raw if raw in MODES else ""
