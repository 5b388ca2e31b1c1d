"""Permissions named in the person's language. Django writes a permission's name into the database
in English when it migrates ("Can add thing"), so the admin's lists of permissions (a group's, a
person's) would stay English whatever the language. A model's four default permissions are named
again from their action and the model's verbose name as it reads now; any other is looked up in the
messages, where its English name is the msgid."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.models import Permission
from django.db.models import ManyToManyField
from django.http import HttpRequest
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

DEFAULT_PERMISSIONS = {
    "add": _("Can add %(model)s"),
    "change": _("Can change %(model)s"),
    "delete": _("Can delete %(model)s"),
    "view": _("Can view %(model)s"),
}


def permission_label(permission: Permission) -> str:
    """As Django shows a permission (app | model | name), with each part in the active language."""
    model = permission.content_type.model_class()
    action, _sep, model_name = permission.codename.partition("_")
    if model is not None and action in DEFAULT_PERMISSIONS and model_name == model._meta.model_name:
        name = DEFAULT_PERMISSIONS[action] % {"model": model._meta.verbose_name}
    else:
        name = gettext(permission.name)
    return f"{permission.content_type} | {name}"


class PermissionsField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return permission_label(obj)


class PermissionNames:
    """A ModelAdmin mixin: its permission lists show `permission_label`s."""

    def formfield_for_manytomany(
        self, db_field: ManyToManyField[Any, Any], request: HttpRequest | None = None, **kwargs: Any
    ) -> forms.ModelMultipleChoiceField[Any] | None:
        if db_field.related_model is Permission:
            kwargs["form_class"] = PermissionsField
        return super().formfield_for_manytomany(db_field, request, **kwargs)  # type: ignore[misc]
