"""The search form of /events/ (layer 3), derived from `EventSearchInput` when this module is imported.

Field names, choices and lengths are read from the serializer's fields, never copied, so the page, the
API and the `search_events` tool accept exactly the same conditions; `tests/pages/test_search_form.py`
fails if either side changes alone. The form adds only what a page needs: translated labels, an "all"
choice for each filter, and a check that the URL holds no parameter the search does not know.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.http import QueryDict
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from core.errors import InvalidInput
from core.inputs import repeated_parameters, unknown_parameters, validated_input
from events.contract import EventSearchInput
from events.questions import answer_text, is_shown
from events.selectors import DEFAULT_PAGE_SIZE, MAX_OFFSET

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

#: Parameters of the list page that are not search conditions.
PAGE_PARAM = "page"
#: The last page the list can ask for (its offset must stay within the API's bound).
MAX_PAGE = MAX_OFFSET // DEFAULT_PAGE_SIZE

# Page labels for the serializer's fields; a field without one falls back to the serializer's label.
LABELS = {
    "query": _("Keyword"),
    "location": _("Location"),
    "price": _("Price"),
    "level": _("Level"),
}
PLACEHOLDERS = {"query": _("e.g. WebMCP, Django, AI")}
ALL_CHOICE_LABELS = {
    "location": _("All locations"),
    "price": _("Any price"),
    "level": _("All levels"),
}


def form_field_for(name: str, field: serializers.Field) -> forms.Field:
    """The form field equivalent to one serializer field; an unknown kind fails at import time."""
    label = LABELS.get(name) or field.label or capfirst(name)
    attrs: dict[str, StrOrPromise] = {}
    if isinstance(field, serializers.ChoiceField):
        empty = ("", ALL_CHOICE_LABELS.get(name, _("All")))
        return forms.ChoiceField(
            label=label,
            required=field.required,
            choices=[empty, *field.choices.items()],
            widget=forms.Select(attrs=attrs),
        )
    if isinstance(field, serializers.CharField):
        attrs.update(type="search", autocomplete="off")
        if name in PLACEHOLDERS:
            attrs["placeholder"] = PLACEHOLDERS[name]
        return forms.CharField(
            label=label,
            required=field.required,
            max_length=field.max_length,
            min_length=field.min_length,
            strip=field.trim_whitespace,
            widget=forms.TextInput(attrs=attrs),
        )
    raise TypeError(f"No search form field for {name!r} ({type(field).__name__}).")


class EventSearchForm(forms.Form):
    """GET conditions of /events/. Cleaned data holds only the conditions that were given."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if isinstance(self.data, QueryDict):
            unknown = unknown_parameters(self.data, {*self.fields, PAGE_PARAM})
            if unknown:
                self.add_error(
                    None,
                    _("These parameters are not search conditions: %(names)s.")
                    % {"names": ", ".join(unknown)},
                )
            repeated = repeated_parameters(self.data)
            if repeated:
                self.add_error(
                    None, _("Give each condition once: %(names)s.") % {"names": ", ".join(repeated)}
                )
            if page_number(self.data) is None:
                self.add_error(None, _("The page number must be a whole number from 1."))
        # The serializer stays the one source of validation: whatever it refuses, the page refuses
        # (validated as every input is, by its kept instance: core/inputs.py).
        try:
            validated_input(EventSearchInput, self.conditions_from(cleaned))
        except InvalidInput as error:
            for name, messages in error.extra["fields"].items():
                if name in self.fields and name not in self.errors:
                    for message in messages:
                        self.add_error(name, message)
        return cleaned

    @staticmethod
    def conditions_from(cleaned: dict[str, Any]) -> dict[str, str]:
        return {name: value for name, value in cleaned.items() if value not in ("", None)}

    @property
    def page(self) -> int:
        if not isinstance(self.data, QueryDict):
            return 1
        return page_number(self.data) or 1

    @property
    def conditions(self) -> dict[str, str]:
        """The given conditions, in the form's field order (valid forms only)."""
        return self.conditions_from(self.cleaned_data)

    def described_conditions(self) -> list[dict[str, str]]:
        """Each given condition with its label and displayed value, e.g. for "no event matches"."""
        described = []
        for name, value in self.conditions.items():
            field = self.fields[name]
            # django-stubs gives the choices getter its setter's types; the field holds (value, label) pairs.
            shown = dict(field.choices).get(value, value) if isinstance(field, forms.ChoiceField) else value  # type: ignore[arg-type]
            described.append({"name": name, "label": str(field.label), "value": str(shown)})
        return described


EventSearchForm.base_fields = EventSearchForm.declared_fields = {
    name: form_field_for(name, field) for name, field in EventSearchInput().fields.items()
}


def page_number(data: QueryDict) -> int | None:
    """The requested results page (1 when absent), or None when the value is not a positive integer."""
    raw = data.get(PAGE_PARAM, "1").strip() or "1"
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_PAGE:
        return None
    return int(raw)


# ── a registration's answers (the event page's form, My events' edit) ─────────────────────────

#: What each refusal code of `validate_answers` tells the person, in their language.
ANSWER_ERRORS = {
    "missing": _("Please answer this question."),
    "invalid": _("This answer is not in the right form."),
    "too_long": _("This answer is too long."),
    "too_short": _("This answer is too short."),
    "too_small": _("This number is too small."),
    "too_large": _("This number is too large."),
    "too_early": _("This date is too early."),
    "too_late": _("This date is too late."),
    "not_an_option": _("Please choose one of the options."),
    "must_accept": _("You need to accept this to register."),
    "unknown": _("This question is not asked here."),
    "staff_only": _("Only the organisers answer this question."),
}
ANSWER_PREFIX = "answers-"


class AnswerField:
    """One question as the page draws it: its name in the form, what the person gave (or had given),
    whether it is shown now (its condition), and the error to show beside it."""

    def __init__(self, question: Any, value: Any, *, shown: bool, error: str, language: str | None) -> None:
        self.question = question
        self.name = f"{ANSWER_PREFIX}{question.identifier}"
        self.value = value
        self.shown = shown
        self.error = error
        self.label = question.label_in(language)
        self.help = question.help_in(language)
        self.kind = question.kind
        self.required = question.required or question.kind == "consent"
        self.options = [(option.identifier, option.label_in(language)) for option in question.offered]
        self.conditional = question.show_if is not None
        self.condition = ""  # when it is asked, in words (answer_fields fills it for a conditional one)
        self.is_parent = False  # other questions depend on its answer (answer_fields sets it)

    @property
    def chosen(self) -> list[str]:
        value = self.value
        return [str(item) for item in value] if isinstance(value, list) else [str(value)] if value else []


def answers_from_post(questions: tuple[Any, ...], data: Any) -> dict[str, Any]:
    """The answers a person's form post gives, in the JSON types the validator takes (a checkbox is
    true or absent, several choices a list; everything else as typed). Only the asked questions'
    fields are read: the form has no other."""
    answers: dict[str, Any] = {}
    for question in questions:
        name = f"{ANSWER_PREFIX}{question.identifier}"
        if question.kind in ("boolean", "consent"):
            if question.kind == "boolean" and data.get(name) in ("true", "false"):
                answers[question.identifier] = data.get(name) == "true"
            elif question.kind == "consent" and data.get(name):
                answers[question.identifier] = True
        elif question.kind == "multi_choice":
            chosen = data.getlist(name) if hasattr(data, "getlist") else data.get(name) or []
            if chosen:
                answers[question.identifier] = list(chosen)
        elif data.get(name) not in (None, ""):
            answers[question.identifier] = data.get(name)
    return answers


def answer_fields(
    questions: tuple[Any, ...],
    answers: dict[str, Any],
    *,
    errors: dict[str, list[dict[str, str]]] | None = None,
    language: str | None,
) -> list[AnswerField]:
    """The page's fields for `questions` with `answers` (the person's, as typed or as stored), each
    shown or not by its condition on those answers, with the refusal's errors in the person's words."""
    fields = []
    by_identifier = {question.identifier: question for question in questions}
    parents = {question.show_if.question for question in questions if question.show_if is not None}
    for question in questions:
        problem = (errors or {}).get(f"answers.{question.identifier}")
        error = str(ANSWER_ERRORS.get(problem[0]["code"], ANSWER_ERRORS["invalid"])) if problem else ""
        shown = is_shown(question, answers)
        field = AnswerField(
            question, answers.get(question.identifier), shown=shown, error=error, language=language
        )
        field.is_parent = question.identifier in parents
        parent = by_identifier.get(question.show_if.question) if question.show_if else None
        if parent is not None and question.show_if is not None:
            values = ", ".join(answer_text(parent, value, language) for value in question.show_if.values)
            field.condition = _("Only if your answer to “%(question)s” is: %(values)s") % {
                "question": parent.label_in(language),
                "values": values,
            }
        fields.append(field)
    return fields
