"""Keep deleted events' public ids retired so no later event can take them."""

from django.db.models.signals import post_delete
from django.dispatch import receiver

from .models import Event, RetiredEventId


@receiver(post_delete, sender=Event, dispatch_uid="retire_event_public_id")
def retire_public_id(sender, instance: Event, **kwargs) -> None:
    RetiredEventId.objects.get_or_create(public_id=instance.public_id)
