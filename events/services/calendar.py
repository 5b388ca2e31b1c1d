"""A person's secret calendar address (`CalendarFeed`): given, or replaced, by `reset_calendar_feed`
(the button on My events). The feed it serves is `events.web.feeds`'s."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.utils import timezone

from core.errors import AuthRequired
from core.transactions import atomic_use_case
from core.visitors import Visitor

from ..models import CalendarFeed

#: 256 random bits, 43 URL-safe characters.
TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


@dataclass(frozen=True)
class CalendarFeedResult:
    feed: CalendarFeed
    #: The person had no address before (else the old one was replaced, and now answers 404).
    created: bool


@atomic_use_case
def reset_calendar_feed(*, visitor: Visitor) -> CalendarFeedResult:
    """Give the signed-in person a calendar address, or a new one in place of the old."""
    if visitor.user is None:
        raise AuthRequired()
    feed, created = CalendarFeed.objects.update_or_create(
        user=visitor.user, defaults={"token": new_token(), "created_at": timezone.now()}
    )
    return CalendarFeedResult(feed=feed, created=created)
