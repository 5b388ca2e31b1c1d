from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Accounts")

    def ready(self) -> None:
        from django.db.models.signals import post_migrate  # noqa: PLC0415 (app loading: in ready())

        from . import signals  # noqa: PLC0415 (app loading: in ready())
        from .oauth import checks  # noqa: F401, PLC0415 (registers the system check)

        post_migrate.connect(signals.schedule_session_sweep, sender=self, dispatch_uid="session_sweep")
