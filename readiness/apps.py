from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReadinessConfig(AppConfig):
    """The agent-readiness dashboard: tools per page, eval results per revision, usage by mode."""

    name = "readiness"
    verbose_name = _("Agent readiness")
