"""Personal access tokens in the admin: who has which, what they may do, when used; revoke, never read.
People: Django's User admin, whose deletion deletes the account with its personal data."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from oauth2_provider.models import get_id_token_model

from core.permission_names import PermissionNames
from core.visitors import Mode

from .models import AccessToken
from .privacy import LastSuperuser, delete_account, is_last_superuser


@admin.register(AccessToken)
class AccessTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "user",
        "prefix",
        "scopes",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["revoked_at", "expires_at"]
    list_select_related = ["user"]
    search_fields = ["name", "prefix", "user__username", "user__email"]
    readonly_fields = [
        "user",
        "name",
        "prefix",
        "scopes",
        "created_at",
        "expires_at",
        "last_used_at",
        "revoked_at",
    ]
    exclude = ["digest"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a token is made by its person (My events) or by create_access_token

    @admin.action(description=_("Revoke selected tokens"), permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[AccessToken]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(
            request,
            ngettext("%(count)d token was revoked.", "%(count)d tokens were revoked.", count)
            % {"count": count},
            messages.SUCCESS,
        )


# The toolkit registers its own admin for applications, grants and tokens (the admin lists who is
# connected); OpenID Connect is off here, so its ID tokens have nothing to show.
admin.site.unregister(get_id_token_model())


# People: Django's User admin, with deleting an account and its personal data (on the person's request)
# as the one way to delete one. The action, the delete button and the bulk delete all run
# `accounts.privacy.delete_account`, so seats go to the people waiting, tokens and sessions end, the
# history keeps no name, and the last superuser is refused. Its history entry names the account's id.
User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class PersonAdmin(PermissionNames, UserAdmin):
    actions = ["delete_account_and_personal_data"]

    def get_actions(
        self, request: HttpRequest, action_location: admin.ActionLocation = admin.ActionLocation.CHANGE_LIST
    ) -> dict:
        actions = super().get_actions(request, action_location)
        actions.pop("delete_selected", None)  # Django's plain delete: the action below instead
        return actions

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and is_last_superuser(obj):
            return False  # no delete button for the last superuser (the use case refuses it too)
        return super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, set[str], Any]:
        """The confirmation page lists what goes; the use case decides it, so the admin's read-only
        rows (registrations, e-mails, Activity) do not stop a deletion for lack of their delete right."""
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def log_deletions(self, request: HttpRequest, queryset: Any) -> list[LogEntry]:
        """Django logs a deletion with the person's name before deleting; ours logs it without."""
        return []

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self._delete(request, obj)

    @admin.action(description=_("Delete account and personal data"), permissions=["delete"])
    def delete_account_and_personal_data(self, request: HttpRequest, queryset: QuerySet) -> None:
        deleted = 0
        for person in queryset.order_by("pk"):
            deleted += self._delete(request, person)
        if deleted:
            self.message_user(
                request,
                ngettext(
                    "%(count)d account and its personal data were deleted; a last e-mail confirms it.",
                    "%(count)d accounts and their personal data were deleted; a last e-mail confirms each.",
                    deleted,
                )
                % {"count": deleted},
                messages.SUCCESS,
            )

    def _delete(self, request: HttpRequest, person: Any) -> bool:
        content_type = ContentType.objects.get_for_model(User, for_concrete_model=False)
        try:
            result = delete_account(user=person, channel=Mode.ADMIN)
        except LastSuperuser as refusal:
            self.message_user(request, str(refusal), messages.ERROR)
            return False
        staff_id = request.user.pk
        if staff_id is None or staff_id == result.user_id:
            return True  # they deleted their own account: no one is left to name in the history
        LogEntry.objects.create(
            user_id=staff_id,
            content_type=content_type,
            object_id=str(result.user_id),
            object_repr=_("account #%(id)s") % {"id": result.user_id},
            action_flag=DELETION,
            change_message=str(_("Account and personal data deleted.")),
        )
        return True
