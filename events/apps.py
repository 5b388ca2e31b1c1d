from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = _("Events")

    def ready(self) -> None:
        from django.db.models.signals import post_migrate  # noqa: PLC0415 (app loading: in ready())

        from . import signals  # noqa: PLC0415 (app loading: in ready())

        post_migrate.connect(signals.schedule_waitlist_sweep, sender=self, dispatch_uid="waitlist_sweep")
