"""`/health`: what is running (version, revision, tool catalogue) and whether the database answers.

Eval reports and traces quote the revision and fingerprint, so a result is tied to a release.
"""

from __future__ import annotations

import functools
import subprocess

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from events.api.envelope import error_envelope
from events.errors import TemporaryFailure
from webmcp.registry import catalogue_fingerprint


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


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except DatabaseError:
        return False


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    facts = {
        "version": settings.APP_VERSION,
        "revision": revision(),
        "toolCatalogueFingerprint": catalogue_fingerprint(),
    }
    if not database_ok():
        # The database is down, so the visitor's stateVersion cannot be read: null.
        body = error_envelope(TemporaryFailure("The database is unreachable."), state_version=None)
        body.update(status="unavailable", database="unreachable", **facts)
        return JsonResponse(body, status=503)
    return JsonResponse({"ok": True, "status": "ok", "database": "ok", **facts})
