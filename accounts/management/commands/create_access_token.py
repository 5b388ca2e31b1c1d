"""`manage.py create_access_token USERNAME --scope events:read --days 30 [--name NAME]`: make a personal
access token for scripts and tests; the token itself is printed on the last line, and only there."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.tokens import MAX_DAYS, TokenRefused, create_access_token
from events.scopes import Scope


class Command(BaseCommand):
    help = "Create a personal access token for a user and print it (once)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--scope", action="append", choices=Scope.values, required=True, help="repeat for several scopes"
        )
        parser.add_argument("--days", type=int, default=30, help=f"expiry, 1 to {MAX_DAYS} days (default 30)")
        parser.add_argument("--name", default="command line")

    def handle(self, *, username: str, scope: list[str], days: int, name: str, **options) -> None:
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"No active user {username!r}.")
        try:
            token, raw = create_access_token(user=user, name=name, scopes=scope, days=days)
        except TokenRefused as refusal:
            raise CommandError(str(refusal)) from refusal
        scopes, expires = ", ".join(token.scopes), f"{token.expires_at:%Y-%m-%d}"
        self.stderr.write(f"Token {token.name!r} for {username}: {scopes}; expires {expires}.")
        self.stdout.write(raw)
