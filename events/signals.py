"""Keep deleted events' public ids retired so no later event can take them; queue the periodic tasks."""

from django.db.models.signals import post_delete
from django.dispatch import receiver

from .models import Event, RetiredEventId


@receiver(post_delete, sender=Event, dispatch_uid="retire_event_public_id")
def retire_public_id(sender, instance: Event, **kwargs) -> None:
    RetiredEventId.objects.get_or_create(public_id=instance.public_id)


def schedule_waitlist_sweep(sender, using: str = "default", **kwargs) -> None:
    """After `migrate` (every deploy, and `make run`): make sure the periodic waiting-list sweep (and the
    reminders' run) is queued.

    Connected by `EventsConfig.ready` for this app's post_migrate only.
    """
    from .tasks import schedule_reminders, schedule_sweep  # noqa: PLC0415 (circular: tasks ↔ services ↔ signals)

    schedule_sweep()
    schedule_reminders()
