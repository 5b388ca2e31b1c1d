from django import forms


class BookSearchForm(forms.Form):
    """What search_books takes: the tool's input schema is generated from this form."""

    query = forms.CharField(
        required=False, max_length=100, help_text="Words in the title or the author's name."
    )
    available = forms.BooleanField(required=False, help_text="Only books that can be borrowed now.")
