"""Start-up of django-webmcp: collect every app's tool declarations (`tools.py`) and register the checks."""

from django.apps import AppConfig
from django.core import checks
from django.utils.module_loading import autodiscover_modules


class WebmcpConfig(AppConfig):
    name = "django_webmcp"
    label = "webmcp"
    verbose_name = "WebMCP"

    def ready(self) -> None:
        """Import each app's `tools.py` so its declarations reach the default registry before the
        first request, and check them (`manage.py check`) before the server starts."""
        from django_webmcp.checks import check_default_registry, check_settings  # noqa: PLC0415 (app loading: in ready())

        autodiscover_modules("tools")
        checks.register(check_default_registry, "webmcp")
        checks.register(check_settings, "webmcp")
