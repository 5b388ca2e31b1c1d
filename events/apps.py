from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = "Events"

    def ready(self) -> None:
        from . import signals  # noqa: F401 - connects the receivers
