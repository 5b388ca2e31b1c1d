from django.apps import AppConfig


class WebmcpConfig(AppConfig):
    name = "webmcp"
    verbose_name = "WebMCP"
