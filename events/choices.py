"""Enumerations shared by every layer (layer 0: imports nothing of ours).

Values are the words agents and URLs use (`taipei`, `free`, `beginner`), never codes to translate.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Location(models.TextChoices):
    TAIPEI = "taipei", _("Taipei")
    KAOHSIUNG = "kaohsiung", _("Kaohsiung")
    ONLINE = "online", _("Online")


class Price(models.TextChoices):
    FREE = "free", _("Free")
    PAID = "paid", _("Paid")


class Level(models.TextChoices):
    BEGINNER = "beginner", _("Beginner")
    INTERMEDIATE = "intermediate", _("Intermediate")
    ADVANCED = "advanced", _("Advanced")


class EventStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    PUBLISHED = "published", _("Published")
    CANCELLED = "cancelled", _("Cancelled")


class RegistrationStatus(models.TextChoices):
    CONFIRMED = "confirmed", _("Confirmed")
    CANCELLED = "cancelled", _("Cancelled")


class Mode(models.TextChoices):
    """Who made a request: a person on a page, an agent through a tool, a program on the API, or an
    organiser in the admin."""

    UI = "ui", _("Person on a page")
    AGENT = "agent", _("Agent tool")
    API = "api", _("API client")
    ADMIN = "admin", _("Organiser in the admin")
