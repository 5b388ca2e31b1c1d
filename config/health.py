"""`/health`: what is running (version, revision, tool catalogue) and whether the database answers.

Eval reports and traces quote the revision and fingerprint, so a result is tied to a release.
"""

from __future__ import annotations

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_webmcp.registry import catalogue_fingerprint

from core.envelope import error_envelope
from core.errors import TemporaryFailure, answer_for
from core.revision import revision


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
        body = error_envelope(
            answer_for(TemporaryFailure)("The database is unreachable."), state_version=None
        )
        body.update(status="unavailable", database="unreachable", **facts)
        return JsonResponse(body, status=503)
    return JsonResponse({"ok": True, "status": "ok", "database": "ok", **facts})
