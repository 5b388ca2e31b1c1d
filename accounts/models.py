"""Personal access tokens: a person lets a program or a headless agent act for them, within scopes."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class AccessTokenQuerySet(models.QuerySet["AccessToken"]):
    def usable(self, now=None) -> AccessTokenQuerySet:
        return self.filter(revoked_at__isnull=True, expires_at__gt=now or timezone.now())


class AccessToken(models.Model):
    """Only the SHA-256 of the token is kept: it is shown once, when made, and never again."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="access_tokens",
        verbose_name=_("user"),
    )
    name = models.CharField(_("name"), max_length=100)
    prefix = models.CharField(_("starts with"), max_length=16, db_index=True)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    scopes = models.JSONField(_("scopes"), default=list)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    expires_at = models.DateTimeField(_("expires"))
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    objects = AccessTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("personal access token")
        verbose_name_plural = _("personal access tokens")
        constraints = [
            models.CheckConstraint(
                condition=Q(expires_at__gt=models.F("created_at")), name="token_expires_later"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()

    def allows(self, scope: str) -> bool:
        return scope in self.scopes


class AgentUse(models.Model):
    """When a connected agent last acted for its person (shown on Connected agents): one row per person
    and client, written at most once a minute per token (accounts/oauth/grants.py)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    last_used_at = models.DateTimeField(_("last used"))

    class Meta:
        verbose_name = _("connected agent use")
        verbose_name_plural = _("connected agent uses")
        constraints = [models.UniqueConstraint(fields=["user", "application"], name="agent_use_once")]

    def __str__(self) -> str:
        return f"{self.application_id} for {self.user_id}: {self.last_used_at:%Y-%m-%d %H:%M}"


class Preferences(models.Model):
    """A person's choices about the site's e-mail: a reminder before each event they are registered
    for, on unless they turn it off (on My events, or with the one-click link in a reminder). A person
    without a row has every default."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    reminders = models.BooleanField(_("reminders before events"), default=True)
    updated_at = models.DateTimeField(_("changed"), auto_now=True)

    class Meta:
        verbose_name = _("e-mail preferences")
        verbose_name_plural = _("e-mail preferences")

    def __str__(self) -> str:
        return f"{self.user_id}: reminders {'on' if self.reminders else 'off'}"

    @classmethod
    def set_reminders(cls, user, *, on: bool) -> None:
        cls.objects.update_or_create(user=user, defaults={"reminders": on})
