"""Which revision of the code is running: `/health`, the eval reports and the readiness dashboard quote
it, so a result is tied to a release."""

from __future__ import annotations

import functools
import subprocess

from django.conf import settings


@functools.cache
def revision() -> str:
    if settings.APP_REVISION:
        return settings.APP_REVISION
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"
