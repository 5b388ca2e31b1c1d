"""Personal access tokens in the admin: who has which, what they may do, when used; revoke, never read."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from oauth2_provider.models import get_id_token_model

from .models import AccessToken


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
