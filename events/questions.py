"""An event's registration questions as every reader needs them (layer 1: plain data, no queries).

`Event.question_form` keeps the questions in the event's own row (models.question_form writes it);
`form_of` reads it into `QuestionSpec`s. From them come the JSON Schema of the `answers` object
(`answers_schema`: identifiers, types, formats, limits, never a label, since labels are organisers'
text and a schema is tool metadata) and the flat form MCP's elicitation asks a person with
(`elicitation_schema`: there the labels are what the person reads). Whether an answer is acceptable
is decided once, by `events.services.answers.validate_answers`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.translation import gettext_lazy as _

from .choices import CHOICE_KINDS, QuestionKind

TEXT_ANSWER_MAX_LENGTH = 1000
EMAIL_MAX_LENGTH = 254
PHONE_PATTERN = r"^\+?[0-9][0-9 ()\-.]{5,24}$"
LANGUAGES = ("en", "zh-hant")


def _in(texts: Mapping[str, str], language: str | None) -> str:
    """A text in `language` (zh-Hant for any Chinese), else English."""
    key = "zh-hant" if (language or "").lower().startswith("zh") else "en"
    return texts.get(key) or texts.get("en") or ""


@dataclass(frozen=True)
class OptionSpec:
    identifier: str
    label: Mapping[str, str]
    hidden: bool = False

    def label_in(self, language: str | None) -> str:
        return _in(self.label, language)


@dataclass(frozen=True)
class ShowIf:
    """Shown only when the answer to `question` is one of `values` (option identifiers, or booleans)."""

    question: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class QuestionSpec:
    identifier: str
    kind: str
    required: bool
    label: Mapping[str, str]
    help: Mapping[str, str]
    min_length: int | None = None
    max_length: int | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_date: str | None = None
    max_date: str | None = None
    show_if: ShowIf | None = None
    staff_only: bool = False
    show_at_door: bool = False
    options: tuple[OptionSpec, ...] = ()

    def label_in(self, language: str | None) -> str:
        return _in(self.label, language)

    def help_in(self, language: str | None) -> str:
        return _in(self.help, language)

    @property
    def offered(self) -> tuple[OptionSpec, ...]:
        """The options a person may choose now (hidden ones stay only for the answers that chose them)."""
        return tuple(option for option in self.options if not option.hidden)

    @property
    def is_choice(self) -> bool:
        return self.kind in CHOICE_KINDS

    @property
    def text_limit(self) -> int:
        """The longest text answer: the question's own limit, never more than 1,000 characters."""
        if self.kind == QuestionKind.EMAIL:
            return EMAIL_MAX_LENGTH
        return min(self.max_length or TEXT_ANSWER_MAX_LENGTH, TEXT_ANSWER_MAX_LENGTH)

    def option_label(self, identifier: Any, language: str | None) -> str:
        for option in self.options:
            if option.identifier == identifier:
                return option.label_in(language)
        return str(identifier)


def form_of(question_form: Iterable[Mapping[str, Any]] | None) -> tuple[QuestionSpec, ...]:
    """The specs of an event's `question_form`, in their order."""
    specs = []
    for raw in question_form or ():
        show_if = raw.get("showIf")
        specs.append(
            QuestionSpec(
                identifier=raw["identifier"],
                kind=raw["kind"],
                required=bool(raw.get("required")),
                label=raw.get("label") or {},
                help=raw.get("help") or {},
                min_length=raw.get("minLength"),
                max_length=raw.get("maxLength"),
                minimum=raw.get("minimum"),
                maximum=raw.get("maximum"),
                min_date=raw.get("minDate"),
                max_date=raw.get("maxDate"),
                show_if=ShowIf(show_if["question"], tuple(show_if["values"])) if show_if else None,
                staff_only=bool(raw.get("staffOnly")),
                show_at_door=bool(raw.get("showAtDoor")),
                options=tuple(
                    OptionSpec(option["identifier"], option.get("label") or {}, bool(option.get("hidden")))
                    for option in raw.get("options") or ()
                ),
            )
        )
    return tuple(specs)


def attendee_questions(questions: Iterable[QuestionSpec]) -> tuple[QuestionSpec, ...]:
    """What a person registering is asked: everything but the organisers' own questions."""
    return tuple(question for question in questions if not question.staff_only)


def is_shown(question: QuestionSpec, values: Mapping[str, Any]) -> bool:
    """Whether `question` is asked, given the (valid) answers `values` to the other questions."""
    if question.show_if is None:
        return True
    given = values.get(question.show_if.question)
    chosen = given if isinstance(given, list) else [given]
    return any(value in question.show_if.values for value in chosen if value is not None)


# ── JSON Schema of the answers (tool metadata: identifiers, never labels) ─────────────────────


def value_schema(question: QuestionSpec) -> dict[str, Any]:
    """The JSON Schema of one answer: its type, format, options and limits."""
    kind = question.kind
    if kind in (QuestionKind.TEXT, QuestionKind.LONG_TEXT, QuestionKind.PHONE, QuestionKind.URL):
        schema: dict[str, Any] = {"type": "string", "maxLength": question.text_limit}
        if question.min_length:
            schema["minLength"] = question.min_length
        if kind == QuestionKind.URL:
            schema["format"] = "uri"
        if kind == QuestionKind.PHONE:
            schema["pattern"] = PHONE_PATTERN
        return schema
    if kind == QuestionKind.EMAIL:
        return {"type": "string", "format": "email", "maxLength": EMAIL_MAX_LENGTH}
    if kind == QuestionKind.NUMBER:
        schema = {"type": "number"}
        if question.minimum is not None:
            schema["minimum"] = question.minimum
        if question.maximum is not None:
            schema["maximum"] = question.maximum
        return schema
    if kind == QuestionKind.BOOLEAN:
        return {"type": "boolean"}
    if kind == QuestionKind.CONSENT:
        return {"type": "boolean", "const": True}
    if kind == QuestionKind.DATE:
        schema = {"type": "string", "format": "date"}
        if question.min_date:
            schema["formatMinimum"] = question.min_date
        if question.max_date:
            schema["formatMaximum"] = question.max_date
        return schema
    offered = [option.identifier for option in question.offered]
    if kind == QuestionKind.SINGLE_CHOICE:
        return {"type": "string", "enum": offered}
    return {"type": "array", "items": {"type": "string", "enum": offered}, "uniqueItems": True}


def answers_schema(questions: Iterable[QuestionSpec]) -> dict[str, Any]:
    """The `answers` object a person registering gives: one property per question they are asked,
    `required` as the form requires (an unconditional required question), and each conditional
    question's requirement as an `if`/`then` on its parent's answer."""
    asked = attendee_questions(questions)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {question.identifier: value_schema(question) for question in asked},
        "additionalProperties": False,
    }
    required = [q.identifier for q in asked if q.show_if is None and _must_answer(q)]
    if required:
        schema["required"] = required
    conditions = [_condition(q) for q in asked if q.show_if is not None and _must_answer(q)]
    if conditions:
        schema["allOf"] = conditions
    return schema


def _must_answer(question: QuestionSpec) -> bool:
    return question.required or question.kind == QuestionKind.CONSENT


def _condition(question: QuestionSpec) -> dict[str, Any]:
    assert question.show_if is not None
    parent = question.show_if.question
    values = list(question.show_if.values)
    matches: dict[str, Any] = {"enum": values}
    if all(isinstance(value, str) for value in values):
        matches = {"anyOf": [{"enum": values}, {"type": "array", "contains": {"enum": values}}]}
    return {
        "if": {"properties": {parent: matches}, "required": [parent]},
        "then": {"required": [question.identifier]},
    }


# ── MCP's flat form (what the person reads: labels in their language) ─────────────────────────


def elicitation_property(question: QuestionSpec, language: str | None) -> dict[str, Any]:
    """One question as a property of MCP's flat elicitation form (primitive types only)."""
    title = question.label_in(language)
    schema = value_schema(question)
    schema.pop("pattern", None)  # not in the flat subset; the server checks the phone number
    schema.pop("formatMinimum", None)
    schema.pop("formatMaximum", None)
    schema.pop("const", None)
    if question.kind == QuestionKind.SINGLE_CHOICE:
        schema = {
            "type": "string",
            "oneOf": [{"const": o.identifier, "title": o.label_in(language)} for o in question.offered],
        }
    elif question.kind == QuestionKind.MULTI_CHOICE:
        schema = {
            "type": "array",
            "items": {
                "anyOf": [{"const": o.identifier, "title": o.label_in(language)} for o in question.offered]
            },
        }
    schema["title"] = title
    if help_text := question.help_in(language):
        schema["description"] = help_text
    return schema


# ── answers as people read them (e-mails, pages, the door, the admin, exports) ────────────────


@dataclass(frozen=True)
class ShownAnswer:
    identifier: str
    label: str  # the question as the person answered it
    value: str  # in words: option labels, yes or no, the text


def shown_answers(
    registration: Any, language: str | None, *, staff: bool = False, door: bool = False
) -> list[ShownAnswer]:
    """A registration's answers in the order of the event's questions, in `language`: the person's own
    (no organisers-only ones unless `staff`), or the door's (`show_at_door` ones only)."""
    stored = registration.answers or {}
    shown = []
    for question in form_of(registration.event.question_form):
        if question.identifier not in stored or (question.staff_only and not staff):
            continue
        if door and not question.show_at_door:
            continue
        entry = stored[question.identifier]
        label = _in(entry.get("label") or question.label, language)
        shown.append(
            ShownAnswer(question.identifier, label, answer_text(question, entry.get("value"), language))
        )
    return shown


def answer_text(question: QuestionSpec, value: Any, language: str | None) -> str:
    """One answer in words: choices by their labels (several joined by commas), yes or no."""
    if isinstance(value, bool):
        with translation.override(language):
            return str(_("Yes") if value else _("No"))
    if isinstance(value, list):
        return ", ".join(question.option_label(item, language) for item in value)
    if question.is_choice:
        return question.option_label(value, language)
    return "" if value is None else str(value)
