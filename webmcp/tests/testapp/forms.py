"""Inputs declared as Django forms: the package needs no DRF for them."""

from django import forms
from django_webmcp.forms import DeclarativeToolFormMixin


class SearchForm(forms.Form):
    query = forms.CharField(required=False, max_length=50, help_text="Words to look for.")
    kind = forms.ChoiceField(choices=[("", "any"), ("tea", "Tea"), ("cake", "Cake")], required=False)


class NoteForm(DeclarativeToolFormMixin, forms.Form):
    text = forms.CharField(max_length=200, help_text="What to write down.")
