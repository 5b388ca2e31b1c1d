"""Making, checking and revoking personal access tokens (the use cases of accounts' tokens).

A token reads `are_<30 random base62 characters><6-character checksum>`: the prefix says whose it is
(secret scanners can look for it) and the checksum lets a typo or a made-up string be refused without a
database lookup. Only its SHA-256 is stored.
"""

from __future__ import annotations

import hashlib
import secrets
import string
import zlib
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from events.scopes import Scope

from .models import AccessToken

PREFIX = "are_"
ALPHABET = string.digits + string.ascii_letters
RANDOM_LENGTH = 30
CHECKSUM_LENGTH = 6
MAX_DAYS = 365
#: How often `last_used_at` is written at most: a busy script must not turn every read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenRefused(ValueError):
    """The request to make a token asks for something it may not have."""


def _base62(number: int, length: int) -> str:
    digits = []
    for _ in range(length):
        number, digit = divmod(number, 62)
        digits.append(ALPHABET[digit])
    return "".join(reversed(digits))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode()), CHECKSUM_LENGTH)


def well_formed(raw: str) -> bool:
    body, checksum = raw[:-CHECKSUM_LENGTH], raw[-CHECKSUM_LENGTH:]
    return (
        len(raw) == len(PREFIX) + RANDOM_LENGTH + CHECKSUM_LENGTH
        and raw.startswith(PREFIX)
        and all(c in ALPHABET for c in raw[len(PREFIX) :])
        and secrets.compare_digest(_checksum(body), checksum)
    )


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def create_access_token(*, user, name: str, scopes: list[str], days: int) -> tuple[AccessToken, str]:
    """A new token for `user`; returns the row and the token itself (to show once, never stored)."""
    name = name.strip()
    if not name:
        raise TokenRefused("Give the token a name, so you know later what it is for.")
    if not scopes or set(scopes) - set(Scope.values):
        raise TokenRefused(f"Choose one or more scopes among {', '.join(Scope.values)}.")
    if not 1 <= days <= MAX_DAYS:
        raise TokenRefused(f"A token expires after 1 to {MAX_DAYS} days.")
    body = PREFIX + "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))
    raw = body + _checksum(body)
    now = timezone.now()
    token = AccessToken.objects.create(
        user=user,
        name=name[:100],
        prefix=raw[:12],
        digest=digest(raw),
        scopes=sorted(set(scopes), key=Scope.values.index),
        created_at=now,
        expires_at=now + timedelta(days=days),
    )
    return token, raw


def authenticate_token(raw: str) -> AccessToken | None:
    """The usable token `raw` stands for (an active account's), or None; notes when it was used."""
    if not well_formed(raw):
        return None
    token = AccessToken.objects.usable().select_related("user").filter(digest=digest(raw)).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def list_access_tokens(*, user) -> list[AccessToken]:
    """`user`'s tokens that are not revoked (expired ones too, marked so on the page), newest first."""
    return list(AccessToken.objects.filter(user=user, revoked_at__isnull=True))


@transaction.atomic
def revoke_access_token(*, user, token_id: int) -> bool:
    """Revoke one of `user`'s tokens at once; False when there is no such usable token."""
    return bool(
        AccessToken.objects.filter(user=user, pk=token_id, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )
