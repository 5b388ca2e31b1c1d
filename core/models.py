"""The one table core keeps: the answers to REST writes sent with an `Idempotency-Key`
(core/idempotency.py), so a retried request is answered again instead of being performed again."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class IdempotencyKey(models.Model):
    """One caller's key, the request it was first sent with, and that request's answer once it has one
    (`status` is null while the first request is still running). Pruned after IDEMPOTENCY_KEY_HOURS."""

    #: Who sent it: a keyed digest of the visitor's key (`Visitor.key`), never the key itself.
    caller = models.CharField(max_length=64)
    key = models.CharField(max_length=255)
    #: A digest of the method, the path with its query, and the body (JSON compared as data).
    fingerprint = models.CharField(max_length=64)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    headers = models.JSONField(default=dict, blank=True)
    body = models.BinaryField(default=b"", blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        # Nobody is given rights on these rows (they are in no admin page): no permissions to list.
        default_permissions = ()
        constraints = [
            models.UniqueConstraint(fields=["caller", "key"], name="core_idempotency_key_once_per_caller"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.status or 'running'})"
