"""Account forms: Django's own, with the e-mail address that confirmations and password resets need."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from events.mail.messages import site_url
from events.scopes import Scope


class SignUpForm(UserCreationForm):
    """Django's, except that a username or an address that already has an account is no error on the
    page (the page would tell anyone which ones do): the form is valid, `taken` says which, and the
    view tells the address by e-mail instead, as the password reset does."""

    email = forms.EmailField(
        label=_("E-mail address"),
        help_text=_("Registration confirmations and password resets are sent here."),
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: What of the person's input already has an account: "username", "email", both or neither.
        self.taken: set[str] = set()

    def clean_username(self) -> str:
        username: str = self.cleaned_data.get("username") or ""
        if username and get_user_model().objects.filter(username__iexact=username).exists():
            self.taken.add("username")
        return username

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        if get_user_model().objects.filter(email__iexact=email).exists():
            self.taken.add("email")
        return email

    def validate_unique(self) -> None:
        """The username's uniqueness is `taken`'s, not an error on the page (see the class)."""
        if not self.taken:
            super().validate_unique()

    def tell_taken(self) -> None:
        """Tell by e-mail what the page does not say (as Django's PasswordResetForm sends its mail): the
        address's owner that they already have an account and how to get back in, or whoever gave a
        new address that the username is taken. Links are the site's own (SITE_URL)."""
        email = self.cleaned_data["email"]
        owner = get_user_model().objects.filter(email__iexact=email).order_by("pk").first()
        context = {
            "site_name": settings.SITE_NAME,
            "owner": owner,
            "username": self.cleaned_data["username"],
            "sign_in_url": site_url(reverse("login")),
            "reset_url": site_url(reverse("password_reset")),
            "sign_up_url": site_url(reverse("signup")),
        }
        subject = render_to_string("registration/signup_taken_subject.txt", context).strip()
        body = render_to_string("registration/signup_taken_email.txt", context)
        send_mail(subject, body, None, [owner.email if owner is not None else email])


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
