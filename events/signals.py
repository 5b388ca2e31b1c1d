"""Keep deleted events' public ids retired so no later event can take them; keep each event's published
question form equal to its question rows; queue the periodic tasks."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .models import (
    Event,
    Question,
    QuestionOption,
    RetiredEventId,
    TicketType,
    refresh_question_form,
    refresh_ticket_form,
)


@receiver(post_delete, sender=Event, dispatch_uid="retire_event_public_id")
def retire_public_id(sender, instance: Event, **kwargs) -> None:
    RetiredEventId.objects.get_or_create(public_id=instance.public_id)


def schedule_waitlist_sweep(sender, using: str = "default", **kwargs) -> None:
    """After `migrate` (every deploy, and `make run`): make sure the periodic waiting-list sweep (and the
    reminders' run, and the payment sweep) is queued.

    Connected by `EventsConfig.ready` for this app's post_migrate only.
    """
    from .sweeps import schedule_payment_sweep  # noqa: PLC0415 (circular: sweeps ↔ actions ↔ signals)
    from .tasks import schedule_reminders, schedule_sweep  # noqa: PLC0415 (circular: tasks ↔ services ↔ signals)

    schedule_sweep()
    schedule_reminders()
    schedule_payment_sweep()


@receiver(post_save, sender=Question, dispatch_uid="question_form_after_question_saved")
@receiver(post_delete, sender=Question, dispatch_uid="question_form_after_question_deleted")
def question_changed(sender, instance: Question, **kwargs) -> None:
    """Every change to a question reaches the form its event's readers use (`Event.question_form`)."""
    refresh_question_form(instance.event_id)


@receiver(post_save, sender=QuestionOption, dispatch_uid="question_form_after_option_saved")
@receiver(post_delete, sender=QuestionOption, dispatch_uid="question_form_after_option_deleted")
def option_changed(sender, instance: QuestionOption, **kwargs) -> None:
    event_id = Question.objects.filter(pk=instance.question_id).values_list("event_id", flat=True).first()
    if event_id is not None:
        refresh_question_form(event_id)


@receiver(post_save, sender=TicketType, dispatch_uid="ticket_form_after_type_saved")
@receiver(post_delete, sender=TicketType, dispatch_uid="ticket_form_after_type_deleted")
def ticket_type_changed(sender, instance: TicketType, **kwargs) -> None:
    """Every change to a ticket type reaches its event's `ticket_form` and price summary."""
    refresh_ticket_form(instance.event_id)
