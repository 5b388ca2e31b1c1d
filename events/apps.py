from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = "Events"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate  # noqa: PLC0415 (app loading: in ready())

        from . import signals  # noqa: PLC0415 (app loading: in ready())

        post_migrate.connect(signals.schedule_waitlist_sweep, sender=self, dispatch_uid="waitlist_sweep")
