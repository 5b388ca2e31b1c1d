"""Accounts for cases played over MCP (`--via mcp`): a fresh account and a personal access token each.

In the browser the runner signs up through `/accounts/signup/`; an agent over MCP has no sign-in, only a
token the person made (`Authorization: Bearer …`). So for each case that needs the person's account the
runner asks for a fresh `eval-<hex>` account (the prefix of the accounts `resetSeats` may clean up,
`seats.EVAL_ACCOUNT_PREFIX`) and a token for it, made by the project's own command
`manage.py create_access_token USERNAME --scope … --days 1` (the token is the last line it prints). The
account is created through Django's user manager (no usable password: nobody signs in with it on the
site); never raw SQL.

The runner does not import Django: it runs `python -m evals.mcp_accounts COUNT` once per run, in a
subprocess with the site's environment (like `python -m evals.seats`), and reads the one JSON line it
prints: `{"accounts": [{"username", "token", "scopes", "days"}, …]}`. Tokens are secrets: the runner
keeps them in memory and never writes them to a report.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Mapping

from .seats import EVAL_ACCOUNT_PREFIX

# checkin:write is only as good as the account's part at an event's door (the `door` setup step).
SCOPES = ("events:read", "saved:write", "registrations:write", "checkin:write")
TOKEN_DAYS = 1
TOKEN_NAME = "evals over MCP"


class AccountError(RuntimeError):
    """Accounts or tokens could not be made on the site's database."""


# ---- inside the site's Django (the subprocess) ---------------------------------------------------


def new_account() -> dict:
    """A fresh `eval-<hex>` account and a token for it, through `manage.py create_access_token`."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    username = f"{EVAL_ACCOUNT_PREFIX}{secrets.token_hex(4)}"
    get_user_model().objects.create_user(username=username, email=f"{username}@example.com", password=None)
    out, err = io.StringIO(), io.StringIO()
    arguments = [username, *(part for scope in SCOPES for part in ("--scope", scope))]
    arguments += ["--days", str(TOKEN_DAYS), "--name", TOKEN_NAME]
    call_command("create_access_token", *arguments, stdout=out, stderr=err)
    lines = out.getvalue().strip().splitlines()
    if not lines:
        raise AccountError(f"create_access_token printed no token for {username}: {err.getvalue().strip()}")
    return {"username": username, "token": lines[-1].strip(), "scopes": list(SCOPES), "days": TOKEN_DAYS}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m evals.mcp_accounts COUNT", file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")  # as manage.py does
    import django

    django.setup()
    from django.core.management.base import CommandError

    try:
        accounts = [new_account() for _ in range(int(args[0]))]
    except (AccountError, CommandError) as error:
        print(f"evals.mcp_accounts: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"accounts": accounts}))
    return 0


# ---- the runner's side ---------------------------------------------------------------------------


class SiteAccounts:
    """Makes accounts with tokens on one site's database: `python -m evals.mcp_accounts N` in `env`
    (the runner's own server's environment, or with `--base-url` the runner's, as for the seat steps)."""

    def __init__(self, env: Mapping[str, str] | None = None, python: str | None = None) -> None:
        self.env = dict(env if env is not None else os.environ)
        self.python = python or sys.executable

    def create(self, count: int) -> list[dict]:
        if count <= 0:
            return []
        from harness.revision import PROJECT_DIR

        env = dict(self.env)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_DIR), env.get("PYTHONPATH")]))
        done = subprocess.run(
            [self.python, "-m", "evals.mcp_accounts", str(count)],
            cwd=PROJECT_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise AccountError(f"mcp_accounts {count} failed: {detail}")
        accounts = json.loads(lines[-1])["accounts"]
        if len(accounts) != count:
            raise AccountError(f"mcp_accounts made {len(accounts)} account(s), not {count}")
        return accounts


if __name__ == "__main__":
    sys.exit(main())
