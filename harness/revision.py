"""Which code a result was obtained on: what `/health` says, and whether the checkout has changed.

`/health` answers the running site's version, revision (git commit or APP_REVISION) and tool catalogue
fingerprint; eval reports quote them so a result is tied to a release. git tells whether the checkout
differs from its commit, when the revision alone does not name the code.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent


def fetch_health(base_url: str, timeout: float = 10.0) -> dict:
    """`/health` as JSON (a 503 body too); on no answer, a stand-in saying so."""
    request = urllib.request.Request(f"{base_url.rstrip('/')}/health", headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        try:
            return json.loads(error.read().decode("utf-8"))
        except ValueError:
            return {"ok": False, "status": f"http-{error.code}"}
    except (OSError, ValueError) as error:
        return {"ok": False, "status": "unreachable", "error": str(error)}


def health_stamp(health: dict) -> dict:
    """The part of /health that ties a result to a release."""
    return {
        "revision": health.get("revision"),
        "toolCatalogueFingerprint": health.get("toolCatalogueFingerprint"),
        "version": health.get("version"),
        "status": health.get("status"),
    }


def _git(*args: str, check: bool = False) -> str | None:
    """git's output in the project directory, or None when git cannot answer."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=10, check=check
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def working_tree_dirty(*, untracked: bool = False) -> bool | None:
    """Whether the checkout differs from its commit (untracked files count only when asked); None when
    git cannot tell."""
    status = _git("status", "--porcelain", *([] if untracked else ["--untracked-files=no"]), check=True)
    return None if status is None else bool(status)


def checkout_revision() -> str:
    """The short commit of the checkout, `+dirty` when any file differs (untracked ones too)."""
    head = _git("rev-parse", "--short", "HEAD")
    dirty = _git("status", "--porcelain")
    if head is None or dirty is None:
        return "unknown"
    return f"{head}{'+dirty' if dirty else ''}" if head else "unknown"
