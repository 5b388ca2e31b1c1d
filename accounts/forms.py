"""Account forms: Django's own, with the e-mail address that confirmations and password resets need."""

from __future__ import annotations

from django import forms
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from events.scopes import Scope


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


class DeleteAccountForm(forms.Form):
    """Deleting one's account: the person's password once more. It is checked by `authenticate`, so a
    wrong one counts towards the sign-in pause (django-axes) like a failed sign-in, and during a pause
    even the right one is refused (`paused`)."""

    password = forms.CharField(
        label=_("Your password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args, user, request, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.request = request
        self.paused = False

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        confirmed = authenticate(self.request, username=self.user.get_username(), password=password)
        self.paused = bool(getattr(self.request, "axes_locked_out", False))
        if confirmed is None or confirmed.pk != self.user.pk:
            raise forms.ValidationError(_("That is not your password: nothing was deleted."))
        return password
