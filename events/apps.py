from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = "Events"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from . import signals

        post_migrate.connect(signals.schedule_waitlist_sweep, sender=self, dispatch_uid="waitlist_sweep")
