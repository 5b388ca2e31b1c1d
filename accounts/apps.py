from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = _("Accounts")

    def ready(self) -> None:
        from django.conf import settings  # noqa: PLC0415 (app loading: in ready())
        from django.db.models.signals import post_delete, post_migrate  # noqa: PLC0415 (app loading: in ready())

        from . import checks, signals  # noqa: F401, PLC0415 (app loading: in ready(); registers the checks)
        from .oauth import checks as oauth_checks  # noqa: F401, PLC0415 (registers the system check)
        from .sessions import end_sessions_of_deleted_person  # noqa: PLC0415 (app loading: in ready())

        post_migrate.connect(signals.schedule_session_sweep, sender=self, dispatch_uid="session_sweep")
        post_delete.connect(
            end_sessions_of_deleted_person, sender=settings.AUTH_USER_MODEL, dispatch_uid="end_sessions"
        )
