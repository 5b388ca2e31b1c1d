"""ops is an installed app for its management commands (`backup`, `restore`); it holds no model."""

from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "ops"
