"""The one validator of answers to an event's registration questions, for every channel.

`validate_answers` is what `register_event` and `update_registration_answers` call (and the page form
before them, to show the same refusal inline): it reads nothing and writes nothing, so a refusal
leaves nothing half-written. The rules, once:

- a question is asked only when it is shown (`questions.is_shown`: its parent's answer is one of its
  values); `required` counts only then, and an answer to a question not shown is dropped;
- an identifier the event does not ask is refused, with the list of those it does;
- an organisers-only question is refused from an attendee (the organisers fill it in);
- each answer has its kind's type, format and limits; a consent must be accepted.

Stored answers are `{identifier: {"value": …, "label": {"en": …, "zh-hant": …}}}`: the label the
person answered, kept with the answer (a later edit of the question does not change what they saw).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator, URLValidator

from ..choices import QuestionKind
from ..errors import AnswersInvalid
from ..questions import PHONE_PATTERN, QuestionSpec, is_shown

#: What each refusal code says (English: the envelope is read by programs and agents; pages say it in
#: the person's language from the code, events/web/forms).
MESSAGES = {
    "missing": "This question needs an answer.",
    "invalid": "This answer is not of the question's type or format.",
    "too_long": "This answer is too long.",
    "too_short": "This answer is too short.",
    "too_small": "This number is below the smallest allowed.",
    "too_large": "This number is above the largest allowed.",
    "too_early": "This date is before the earliest allowed.",
    "too_late": "This date is after the latest allowed.",
    "not_an_option": "This is not one of the question's options.",
    "must_accept": "This must be accepted to register.",
    "unknown": "This event asks no question with this identifier.",
    "staff_only": "Only the organisers answer this question.",
}

_email = EmailValidator()
_url = URLValidator(schemes=["http", "https"])
_phone = re.compile(PHONE_PATTERN)


class _Refused(Exception):
    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(code)


def validate_answers(
    *,
    questions: tuple[QuestionSpec, ...],
    answers: Mapping[str, Any] | None,
    staff: bool = False,
    kept: Mapping[str, Any] | None = None,
    shown_by: Mapping[str, Any] | None = None,
    ticket_types: Sequence[str] = (),
) -> dict[str, dict[str, Any]]:
    """The answers to store, or `AnswersInvalid` naming every problem at once (`answers.<identifier>`).

    `staff`: the organisers answer (their own questions included). `kept`: the stored answers being
    replaced, whose organisers-only answers an attendee's change keeps as they were. `shown_by`: the
    values already stored for questions not in `questions` (the person's own, when the organisers
    answer theirs), read only to decide which of `questions` are shown. `ticket_types`: the identifiers
    of the event's ticket types on sale, named in the refusal of answers to an event that asks no
    questions (a small model put the ticket type the person chose there; evals/README.md).
    """
    given = dict(answers or {})
    problems: dict[str, list[dict[str, str]]] = {}
    asked = {q.identifier: q for q in questions if staff or not q.staff_only}
    for identifier in given:
        if identifier in asked:
            continue
        code = "staff_only" if any(q.identifier == identifier for q in questions) else "unknown"
        problems[f"answers.{identifier}"] = [_problem(code)]
    values: dict[str, Any] = dict(shown_by or {})
    # Parents first: a condition depends only on an unconditional question (one level).
    ordered = sorted(asked.values(), key=lambda question: question.show_if is not None)
    for question in ordered:
        if not is_shown(question, values):
            continue  # not asked: not required, and an answer to it is dropped
        raw = given.get(question.identifier)
        try:
            value = _clean(question, raw)
        except _Refused as refused:
            problems[f"answers.{question.identifier}"] = [_problem(refused.code)]
            continue
        if value is None:
            if question.kind == QuestionKind.CONSENT:
                problems[f"answers.{question.identifier}"] = [_problem("must_accept")]
            elif question.required:
                problems[f"answers.{question.identifier}"] = [_problem("missing")]
            continue
        values[question.identifier] = value
    if problems:
        extra: dict[str, Any] = {"fields": problems}
        if any(entry[0]["code"] == "unknown" for entry in problems.values()):
            extra["validIdentifiers"] = sorted(asked)
            if not asked:  # a small model filled `answers` with search filters: say plainly what to do
                extra["nextAction"] = "This event asks no questions: call again without answers."
                if len(ticket_types) > 1:
                    extra["nextAction"] += (
                        " The ticket type the person chose goes in ticket_type, one of: "
                        + ", ".join(ticket_types)
                        + "."
                    )
        raise AnswersInvalid(extra=extra)
    labels = {q.identifier: dict(q.label) for q in questions}
    stored = {
        identifier: {"value": value, "label": labels[identifier]}
        for identifier, value in values.items()
        if identifier in asked
    }
    if not staff and kept:
        for question in questions:
            if question.staff_only and question.identifier in kept:
                stored[question.identifier] = kept[question.identifier]
    return stored


def _problem(code: str) -> dict[str, str]:
    return {"code": code, "message": MESSAGES[code]}


def _absent(raw: Any) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip()) or raw == []


def _clean(question: QuestionSpec, raw: Any) -> Any:
    """The answer's stored value, None when absent, or `_Refused` with its code."""
    if _absent(raw):
        return None
    kind = question.kind
    if kind in (QuestionKind.BOOLEAN, QuestionKind.CONSENT):
        if not isinstance(raw, bool):
            raise _Refused("invalid")
        if kind == QuestionKind.CONSENT and raw is not True:
            raise _Refused("must_accept")
        return raw
    if kind == QuestionKind.NUMBER:
        return _number(question, raw)
    if kind == QuestionKind.SINGLE_CHOICE:
        if not isinstance(raw, str):
            raise _Refused("invalid")
        if raw not in {option.identifier for option in question.offered}:
            raise _Refused("not_an_option")
        return raw
    if kind == QuestionKind.MULTI_CHOICE:
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            raise _Refused("invalid")
        if len(set(raw)) != len(raw):
            raise _Refused("invalid")
        offered = [option.identifier for option in question.offered]
        if not set(raw) <= set(offered):
            raise _Refused("not_an_option")
        return [identifier for identifier in offered if identifier in raw]  # the form's order
    if not isinstance(raw, str):
        raise _Refused("invalid")
    text = raw.strip()
    if kind == QuestionKind.DATE:
        return _date(question, text)
    if len(text) > question.text_limit:
        raise _Refused("too_long")
    if question.min_length and len(text) < question.min_length:
        raise _Refused("too_short")
    if kind == QuestionKind.TEXT and ("\n" in text or "\r" in text):
        raise _Refused("invalid")
    if kind == QuestionKind.EMAIL:
        _check(_email, text)
    elif kind == QuestionKind.URL:
        _check(_url, text)
    elif kind == QuestionKind.PHONE and not (_phone.fullmatch(text) and sum(c.isdigit() for c in text) >= 6):
        raise _Refused("invalid")
    return text


def _check(validator: Any, text: str) -> None:
    try:
        validator(text)
    except ValidationError:
        raise _Refused("invalid") from None


def _number(question: QuestionSpec, raw: Any) -> int | float:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise _Refused("invalid")
    try:
        number = Decimal(str(raw).strip())
    except InvalidOperation:
        raise _Refused("invalid") from None
    if not number.is_finite() or abs(number) >= Decimal("1e12"):
        raise _Refused("invalid")
    if question.minimum is not None and number < Decimal(str(question.minimum)):
        raise _Refused("too_small")
    if question.maximum is not None and number > Decimal(str(question.maximum)):
        raise _Refused("too_large")
    if number == number.to_integral_value():
        return int(number)
    value = float(number)
    if not math.isfinite(value):
        raise _Refused("invalid")
    return value


def _date(question: QuestionSpec, text: str) -> str:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise _Refused("invalid")
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise _Refused("invalid") from None
    if question.min_date and day < date.fromisoformat(question.min_date):
        raise _Refused("too_early")
    if question.max_date and day > date.fromisoformat(question.max_date):
        raise _Refused("too_late")
    return day.isoformat()
