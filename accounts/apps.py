from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from . import signals

        post_migrate.connect(signals.schedule_session_sweep, sender=self, dispatch_uid="session_sweep")
