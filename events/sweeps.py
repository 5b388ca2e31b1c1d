"""The payment sweep: a declared system actor (`core.visitors.SYSTEM`) that the worker runs every
PAYMENT_SWEEP_MINUTES (and `manage.py expire_payments` at once). It queues the payment reminders due,
then performs the `expire_payments` row for the registrations not paid by their deadline: one
Activity row per registration it expires, each with its event, channel `system`
(`actions.system_caller`), client "payment sweep". An interface like the management commands: it
performs rows, never a service itself.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.tasks import task
from django.utils import timezone

from core.tasks import keep_one_queued

from .actions import ACTIONS, Performed, perform, system_caller
from .choices import AWAITING_TRANSFER, RegistrationStatus
from .models import Registration
from .tasks import queue_payment_reminders

#: The Activity rows' client: what acted for the operator.
CLIENT = "payment sweep"


def sweep(*, client: str = CLIENT) -> Performed | None:
    """Queue the reminders due, then expire what is overdue (None when nothing is: no row)."""
    now = timezone.now()
    queue_payment_reminders(now=now)
    overdue = Registration.objects.filter(
        status=RegistrationStatus.PENDING_PAYMENT,
        payment_status__in=AWAITING_TRANSFER,
        payment_due_at__lte=now,
    )
    if not overdue.exists():
        return None
    return perform(ACTIONS["expire_payments"], system_caller(client), {})


@task()
def sweep_payments() -> None:
    """Every PAYMENT_SWEEP_MINUTES: the sweep, then the next run queued."""
    sweep()
    schedule_payment_sweep(after=timedelta(minutes=settings.PAYMENT_SWEEP_MINUTES))


def schedule_payment_sweep(*, after: timedelta = timedelta(0)) -> None:
    """Make sure one sweep is queued (after `migrate`, and by each sweep for the next one)."""
    keep_one_queued(sweep_payments, after=after)
