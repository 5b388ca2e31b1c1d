"""Account forms: Django's own, with the e-mail address that confirmations and password resets need."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from core.scopes import Scope


class SignUpForm(UserCreationForm):
    email = forms.EmailField(
        label=_("E-mail address"),
        help_text=_("Registration confirmations and password resets are sent here."),
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(_("An account with this e-mail address already exists."))
        return email


class AccessTokenForm(forms.Form):
    """A new personal access token: what it is for, what it may do, how long it lives."""

    DAYS = [(7, _("7 days")), (30, _("30 days")), (90, _("90 days")), (365, _("1 year"))]

    name = forms.CharField(label=_("Name"), max_length=100, help_text=_("What or who will use it."))
    scopes = forms.MultipleChoiceField(
        label=pgettext_lazy("what an access token may do", "May"),
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[Scope.EVENTS_READ],
    )
    days = forms.TypedChoiceField(label=_("Expires after"), choices=DAYS, coerce=int, initial=30)
