"""Hypothesis: random answers against random question sets, through `register_event`'s action row (what
every channel performs). The answer is a registration or a refusal from the contract (never an
unexpected error, which an interface answers with a 500), and a refusal writes nothing: no
registration, no seat, no stateVersion rise. A registration stores only answers the form asks for."""

from __future__ import annotations

import itertools
from datetime import date
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from core.errors import DomainError
from core.visitors import Visitor
from events import actions
from events.choices import QuestionKind
from events.models import Event, Registration
from events.questions import form_of
from events.selectors import state_version
from tests.factories import EventFactory, QuestionFactory, QuestionOptionFactory, UserFactory

pytestmark = [pytest.mark.fuzz, pytest.mark.django_db]

IDENTIFIERS = ["diet", "size", "company", "age", "consent", "topics", "arrival", "email", "site", "phone"]
OPTIONS = ["a", "b", "c"]
_serial = itertools.count()

question_sets = st.lists(
    st.fixed_dictionaries(
        {
            "identifier": st.sampled_from(IDENTIFIERS),
            "kind": st.sampled_from(QuestionKind.values),
            "required": st.booleans(),
            "staff_only": st.booleans(),
            "max_length": st.one_of(st.none(), st.integers(1, 1000)),
            "conditional": st.booleans(),
        }
    ),
    max_size=6,
    unique_by=lambda question: question["identifier"],
)
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**15), 10**15),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.text(min_size=990, max_size=1010, alphabet="xy"),
    st.sampled_from(
        [*OPTIONS, "2027-01-01", "2027-02-30", "a@example.com", "https://example.com", "+886 912"]
    ),
    st.lists(st.sampled_from([*OPTIONS, "z"]), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
answer_sets = st.dictionaries(st.sampled_from([*IDENTIFIERS, "unknown", ""]), values, max_size=8)


def build_event(questions: list[dict[str, Any]]) -> Event:
    event = EventFactory(public_id=f"evt-fuzz-{next(_serial)}", capacity=5)
    parent = None
    for position, spec in enumerate(questions):
        question = QuestionFactory(
            event=event,
            position=position,
            identifier=spec["identifier"],
            kind=spec["kind"],
            required=spec["required"],
            staff_only=spec["staff_only"],
            max_length=spec["max_length"],
            min_date=date(2027, 1, 1) if spec["kind"] == QuestionKind.DATE else None,
        )
        if question.kind in (QuestionKind.SINGLE_CHOICE, QuestionKind.MULTI_CHOICE):
            for option in OPTIONS:
                QuestionOptionFactory(question=question, identifier=option)
        if parent is not None and spec["conditional"]:
            question.show_if = parent
            question.show_if_values = ["a"] if parent.kind != QuestionKind.BOOLEAN else [True]
            question.save()
        elif parent is None and question.kind in (QuestionKind.SINGLE_CHOICE, QuestionKind.BOOLEAN):
            parent = question
    event.refresh_from_db()
    return event


@settings(max_examples=80)
@given(questions=question_sets, answers=answer_sets)
def test_random_answers_register_or_are_refused_and_a_refusal_writes_nothing(questions, answers):
    event = build_event(questions)
    person = Visitor(user=UserFactory())
    before = state_version(visitor=person)
    note(f"form={event.question_form!r}")
    try:
        result = actions.call(
            "register_event", visitor=person, channel="api", event_id=event.public_id, answers=answers
        )
    except DomainError as error:
        assert error.code == "INVALID_INPUT", error.reason
        assert not Registration.objects.filter(event=event).exists()
        assert Event.objects.get(pk=event.pk).seats_taken == 0
        assert state_version(visitor=person) == before
        return
    asked = {q.identifier for q in form_of(event.question_form) if not q.staff_only}
    assert set(result.registration.answers) <= asked
    assert Event.objects.get(pk=event.pk).seats_taken == 1
