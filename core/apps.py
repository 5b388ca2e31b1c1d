"""core is an installed app for its one table, the REST writes' idempotency keys (core/models.py),
whose pruning it queues after `migrate`."""

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def schedule_idempotency_sweep(sender, using: str = "default", **kwargs) -> None:
    """After `migrate` (every deploy, and `make run`): make sure the periodic pruning is queued."""
    from .tasks import schedule_idempotency_sweep as schedule  # noqa: PLC0415 (app loading: the task backend's model)

    schedule()


class CoreConfig(AppConfig):
    name = "core"

    def ready(self) -> None:
        post_migrate.connect(schedule_idempotency_sweep, sender=self)
