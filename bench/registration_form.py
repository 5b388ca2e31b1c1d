"""What the bench's paid events ask at registration: `n` questions and two paid ticket types, and the
answers a person gives to them (bench/tasks.py: the rush events, the event pages with and without
questions, the statements per registration write; bench/payment_runs.py).

The questions cycle through the kinds a form usually has, every one required, so each answer is
checked by the one validator (events/services/answers.py); the first three are the rush's: a short
text, one choice among three options, and yes or no. Rows are created through the models, so each
event's `question_form` and `ticket_form` follow (events/signals.py) as after an organiser's edits.

Needs a configured Django (bench/tasks.py sets it up before importing this).
"""

from __future__ import annotations

from typing import Any

from events.choices import QuestionKind
from events.models import Event, Question, QuestionOption, TicketType

#: The ticket types every paid bench event sells ({identifier: TWD}); no cap and no sales window, so a
#: registration takes its seat without waiting for the event's row lock (as any uncapped type does).
TICKET_TYPES = {"regular": 600, "student": 300}
OPTIONS = ("none", "vegetarian", "vegan")
#: The kinds, in the order the questions cycle through them, and a valid answer of each.
KINDS: tuple[tuple[str, Any], ...] = (
    (QuestionKind.TEXT, "Ada Lovelace"),
    (QuestionKind.SINGLE_CHOICE, "vegetarian"),
    (QuestionKind.BOOLEAN, True),
    (QuestionKind.NUMBER, 3),
    (QuestionKind.EMAIL, "ada@example.com"),
    (QuestionKind.DATE, "2027-01-15"),
    (QuestionKind.MULTI_CHOICE, ["none", "vegan"]),
    (QuestionKind.LONG_TEXT, "Looking forward to the talks,\nand to meeting everyone."),
)


def identifier(index: int) -> str:
    return f"q{index + 1}"


def add_questions(event: Event, count: int) -> None:
    """`count` required questions on `event`, the kinds of KINDS in turn (choices with OPTIONS)."""
    for index in range(count):
        kind = KINDS[index % len(KINDS)][0]
        question = Question.objects.create(
            event=event,
            position=index,
            identifier=identifier(index),
            label_en=f"Question {index + 1}: what should the organisers know?",
            label_zh_hant=f"問題 {index + 1}：主辦單位需要知道什麼？",
            kind=kind,
            required=True,
        )
        if kind in (QuestionKind.SINGLE_CHOICE, QuestionKind.MULTI_CHOICE):
            for position, option in enumerate(OPTIONS):
                QuestionOption.objects.create(
                    question=question,
                    position=position,
                    identifier=option,
                    label_en=option.title(),
                    label_zh_hant=option,
                )


def add_ticket_types(event: Event) -> None:
    """The paid TICKET_TYPES on `event` (its price summary becomes `paid`, from TWD 300)."""
    for position, (name, price) in enumerate(TICKET_TYPES.items()):
        TicketType.objects.create(
            event=event,
            position=position,
            identifier=name,
            name_en=name.title(),
            name_zh_hant=name,
            price=price,
        )


def answers(count: int) -> dict[str, Any]:
    """A valid answer to each of the first `count` questions of `add_questions`."""
    return {identifier(index): KINDS[index % len(KINDS)][1] for index in range(count)}


def body(count: int, person: int) -> dict[str, Any]:
    """A registration's JSON body: the answers to `count` questions and a ticket type (the types in
    turn, by the person's number). No payment method: a bank transfer, which holds the seat."""
    types = list(TICKET_TYPES)
    return {"answers": answers(count), "ticket_type": types[person % len(types)]}
