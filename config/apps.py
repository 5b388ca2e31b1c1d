"""The installed apps whose names a person reads in the admin, named in our catalogue: their own
AppConfig gives a plain English string, which no catalogue can reach. Listed in INSTALLED_APPS in
place of the apps' own (same name and label, their ready() unchanged).

The admin's AppConfig is here too: once it has imported every app's admin module, `config.admin`
gives the installed apps' admin pages the column and field names their code leaves in English."""

from __future__ import annotations

from axes.apps import AppConfig as AxesAppConfig
from django.contrib.admin.apps import AdminConfig
from django.utils.translation import gettext_lazy as _
from django_tasks_db.apps import TasksAppConfig
from oauth2_provider.apps import DOTConfig


class SiteAdminConfig(AdminConfig):
    def ready(self) -> None:
        super().ready()  # autodiscover: every app's admin module is registered now
        from . import admin  # noqa: F401, PLC0415 (replaces registrations made just above)


class TasksConfig(TasksAppConfig):
    verbose_name = _("Background tasks")  # type: ignore[assignment]  # (its stub says str; Django takes a lazy one)


class OAuthConfig(DOTConfig):
    verbose_name = _("Agents' sign-in (OAuth)")

    #: The toolkit's models name themselves after their class ("access token"): no catalogue reaches
    #: those. Set once the models are loaded; migrations read the models' declared Meta, not these.
    MODEL_NAMES = {
        "application": (_("application"), _("applications")),
        "accesstoken": (_("access token"), _("access tokens")),
        "refreshtoken": (_("refresh token"), _("refresh tokens")),
        "grant": (_("authorization code"), _("authorization codes")),
        "idtoken": (_("ID token"), _("ID tokens")),
        "devicegrant": (_("device code"), _("device codes")),
    }

    def ready(self) -> None:
        super().ready()
        for model in self.get_models():
            names = self.MODEL_NAMES.get(model._meta.model_name or "")
            if names is not None:
                model._meta.verbose_name, model._meta.verbose_name_plural = names


class SignInLimitsConfig(AxesAppConfig):
    verbose_name = _("Sign-in limits")
