"""core is an installed app for its management commands alone (`backup`, `restore`); it holds no model."""

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
