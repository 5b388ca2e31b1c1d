"""`{% access_tokens %}`: the signed-in person's tokens and the form for a new one, for My events."""

from __future__ import annotations

from typing import Any

from django import template

from accounts.forms import AccessTokenForm
from accounts.models import AccessToken

register = template.Library()


@register.inclusion_tag("accounts/tokens_section.html", takes_context=True)
def access_tokens(context: template.Context) -> dict[str, Any]:
    user = context["request"].user
    tokens = (
        list(AccessToken.objects.filter(user=user, revoked_at__isnull=True)) if user.is_authenticated else []
    )
    return {
        "tokens": tokens,
        "form": AccessTokenForm(),
        "user": user,
        "csrf_token": context.get("csrf_token"),
    }
