"""The installed apps' admin pages in the site's words: their own admin classes name some columns and
fields with plain strings or with names made from attribute names ("Pk", "Task name", "Status"),
which no catalogue reaches. Each is registered again as a subclass that names them through ours; the
rest of each page is theirs, unchanged. Imported once the admin has registered every app's admin
module (`config.apps.SiteAdminConfig`)."""

from __future__ import annotations

from typing import Any

from axes.admin import AccessAttemptAdmin
from axes.models import AccessAttempt
from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django_tasks_db.admin import DBTaskResultAdmin
from django_tasks_db.models import DBTaskResult
from oauth2_provider import admin as oauth_admin
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from core.permission_names import PermissionNames


def _register_again(model: Any, admin_class: type[admin.ModelAdmin]) -> None:
    if admin.site.is_registered(model):  # axes registers its own only with AXES_ENABLE_ADMIN
        admin.site.unregister(model)
        admin.site.register(model, admin_class)


class TaskResultAdmin(DBTaskResultAdmin):
    list_display = (
        "task_id",
        "task",
        "status",
        "enqueued_at",
        "started_at",
        "finished_at",
        "priority",
        "queue_name",
    )

    def get_readonly_fields(self, request: HttpRequest, obj: DBTaskResult | None = None) -> list[str]:
        fields = super().get_readonly_fields(request, obj)
        return ["task_id" if name == "id" else name for name in fields]

    @admin.display(description=_("ID"), ordering="id")
    def task_id(self, result: DBTaskResult) -> str:
        return str(result.id)

    @admin.display(description=_("task"))
    def task(self, result: DBTaskResult) -> str:
        return result.task_name

    @admin.display(description=_("traceback"))
    def formatted_traceback(self, result: DBTaskResult) -> str:
        return super().formatted_traceback(result)

    @admin.display(description=_("run after"))
    def display_run_after(self, result: DBTaskResult) -> Any:
        return super().display_run_after(result)


def _numbered(columns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple("row_id" if name == "pk" else name for name in columns)


class Numbered:
    """The "pk" column ("Pk", a name made from the attribute) as an ID column."""

    @admin.display(description=_("ID"), ordering="pk")
    def row_id(self, obj: Any) -> int:
        return obj.pk


class OAuthApplicationAdmin(Numbered, oauth_admin.ApplicationAdmin):
    list_display = _numbered(oauth_admin.ApplicationAdmin.list_display)


class OAuthAccessTokenAdmin(Numbered, oauth_admin.AccessTokenAdmin):
    list_display = _numbered(oauth_admin.AccessTokenAdmin.list_display)
    actions = ("revoke_tokens",)

    @admin.action(description=_("Revoke selected access tokens"))
    def revoke_tokens(self, request: HttpRequest, queryset: Any) -> None:
        super().revoke_tokens(request, queryset)

    @admin.display(description=_("token"))
    def masked_token(self, obj: Any) -> str:
        return super().masked_token(obj)


class OAuthRefreshTokenAdmin(Numbered, oauth_admin.RefreshTokenAdmin):
    list_display = _numbered(oauth_admin.RefreshTokenAdmin.list_display)
    actions = ("revoke_tokens",)

    @admin.action(description=_("Revoke selected refresh tokens"))
    def revoke_tokens(self, request: HttpRequest, queryset: Any) -> None:
        super().revoke_tokens(request, queryset)

    @admin.display(description=_("token"))
    def masked_token(self, obj: Any) -> str:
        return super().masked_token(obj)


class OAuthGrantAdmin(Numbered, oauth_admin.GrantAdmin):
    list_display = _numbered(oauth_admin.GrantAdmin.list_display)

    @admin.display(description=_("code"))
    def masked_code(self, obj: Any) -> str:
        return super().masked_code(obj)


class SignInAttemptAdmin(AccessAttemptAdmin):
    @admin.display(description=_("status"))
    def status(self, attempt: AccessAttempt) -> Any:
        return super().status(attempt)

    @admin.action(description=_("Clean up expired attempts"))
    def cleanup_expired_attempts(self, request: HttpRequest, queryset: Any) -> None:
        """axes's own says how many it removed in an f-string inside `gettext`, a message no
        catalogue can hold; the same count, in words a catalogue has (and in the plural). axes reads
        the cool-off threshold from the time of a sign-in attempt, which only a sign-in request
        carries (its action answered 500 from the admin): none here, so it counts from now."""
        request.axes_attempt_time = None  # type: ignore[attr-defined]
        count = self.handler.clean_expired_user_attempts(request=request)
        message = ngettext(
            "Cleaned up %(count)d expired access attempt.",
            "Cleaned up %(count)d expired access attempts.",
            count,
        )
        self.message_user(request, message % {"count": count})


class PermissionNamesGroupAdmin(PermissionNames, GroupAdmin):
    pass


_register_again(DBTaskResult, TaskResultAdmin)
_register_again(get_application_model(), OAuthApplicationAdmin)
_register_again(get_access_token_model(), OAuthAccessTokenAdmin)
_register_again(get_refresh_token_model(), OAuthRefreshTokenAdmin)
_register_again(get_grant_model(), OAuthGrantAdmin)
_register_again(AccessAttempt, SignInAttemptAdmin)
_register_again(Group, PermissionNamesGroupAdmin)
