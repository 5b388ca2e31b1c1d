"""validate_answers, the one validator of answers on every channel: a table of answers against one
form that asks each kind once, with a condition, a consent and an organisers-only question."""

from __future__ import annotations

import pytest

from events.errors import AnswersInvalid
from events.questions import form_of
from events.services.answers import validate_answers

pytestmark = pytest.mark.unit


def _q(identifier: str, kind: str, **more) -> dict:
    return {
        "identifier": identifier,
        "kind": kind,
        "label": {"en": identifier.title(), "zh-hant": "問"},
        **more,
    }


def _options(*identifiers: str, hidden: tuple[str, ...] = ()) -> list[dict]:
    return [{"identifier": i, "label": {"en": i, "zh-hant": i}, "hidden": i in hidden} for i in identifiers]


FORM = form_of(
    [
        _q(
            "diet",
            "single_choice",
            required=True,
            options=_options("none", "vegetarian", "other", "old", hidden=("old",)),
        ),
        _q(
            "diet_other",
            "text",
            required=True,
            maxLength=50,
            showIf={"question": "diet", "values": ["other"]},
        ),
        _q("topics", "multi_choice", options=_options("ai", "web", "data")),
        _q("company", "text"),
        _q("bio", "long_text", minLength=3),
        _q("age", "number", minimum=12, maximum=120),
        _q("newsletter", "boolean"),
        _q("photo_ok", "consent"),
        _q("arrival", "date", minDate="2027-01-01", maxDate="2027-12-31"),
        _q("email", "email"),
        _q("site", "url"),
        _q("phone", "phone"),
        _q("seat", "text", staffOnly=True),
    ]
)
BASE = {"diet": "none", "photo_ok": True}


def valid(answers: dict, **options) -> dict:
    return {
        key: entry["value"]
        for key, entry in validate_answers(questions=FORM, answers=answers, **options).items()
    }


def refused(answers: dict) -> dict:
    with pytest.raises(AnswersInvalid) as caught:
        validate_answers(questions=FORM, answers=answers)
    return {key: problems[0]["code"] for key, problems in caught.value.extra["fields"].items()}


ACCEPTED = [
    ({}, {}),
    ({"diet": "other", "diet_other": "no nuts"}, {"diet": "other", "diet_other": "no nuts"}),
    ({"diet_other": "dropped: not shown"}, {}),
    ({"topics": ["web", "ai"]}, {"topics": ["ai", "web"]}),
    ({"topics": []}, {}),
    ({"company": "  ACME  "}, {"company": "ACME"}),
    ({"company": ""}, {}),
    ({"company": None}, {}),
    ({"age": 30}, {"age": 30}),
    ({"age": "41.5"}, {"age": 41.5}),
    ({"newsletter": False}, {"newsletter": False}),
    ({"arrival": "2027-03-04"}, {"arrival": "2027-03-04"}),
    ({"email": "a@example.com"}, {"email": "a@example.com"}),
    ({"site": "https://example.com/x"}, {"site": "https://example.com/x"}),
    ({"phone": "+886 2 1234-5678"}, {"phone": "+886 2 1234-5678"}),
    ({"company": "x" * 1000}, {"company": "x" * 1000}),
]


@pytest.mark.parametrize(("answers", "stored"), ACCEPTED)
def test_valid_answers_are_stored_cleaned(answers, stored):
    assert valid({**BASE, **answers}) == {**BASE, **stored}


REFUSED = [
    ({"diet": None}, {"answers.diet": "missing"}),
    ({"diet": "fish"}, {"answers.diet": "not_an_option"}),
    ({"diet": "old"}, {"answers.diet": "not_an_option"}),  # hidden: no longer offered
    ({"diet": ["none"]}, {"answers.diet": "invalid"}),
    ({"diet": "other"}, {"answers.diet_other": "missing"}),
    ({"diet": "other", "diet_other": "x" * 51}, {"answers.diet_other": "too_long"}),
    ({"topics": ["ai", "ai"]}, {"answers.topics": "invalid"}),
    ({"topics": ["ai", "cooking"]}, {"answers.topics": "not_an_option"}),
    ({"topics": "ai"}, {"answers.topics": "invalid"}),
    ({"company": "x" * 1001}, {"answers.company": "too_long"}),
    ({"company": "two\nlines"}, {"answers.company": "invalid"}),
    ({"company": 5}, {"answers.company": "invalid"}),
    ({"bio": "ab"}, {"answers.bio": "too_short"}),
    ({"age": 11}, {"answers.age": "too_small"}),
    ({"age": 121}, {"answers.age": "too_large"}),
    ({"age": "many"}, {"answers.age": "invalid"}),
    ({"age": True}, {"answers.age": "invalid"}),
    ({"age": "NaN"}, {"answers.age": "invalid"}),
    ({"newsletter": "yes"}, {"answers.newsletter": "invalid"}),
    ({"photo_ok": False}, {"answers.photo_ok": "must_accept"}),
    ({"photo_ok": None}, {"answers.photo_ok": "must_accept"}),
    ({"arrival": "2026-12-31"}, {"answers.arrival": "too_early"}),
    ({"arrival": "2028-01-01"}, {"answers.arrival": "too_late"}),
    ({"arrival": "2027-02-30"}, {"answers.arrival": "invalid"}),
    ({"arrival": "next week"}, {"answers.arrival": "invalid"}),
    ({"email": "not an address"}, {"answers.email": "invalid"}),
    ({"site": "javascript:alert(1)"}, {"answers.site": "invalid"}),
    ({"phone": "call me"}, {"answers.phone": "invalid"}),
    ({"shoe_size": "42"}, {"answers.shoe_size": "unknown"}),
    ({"seat": "A1"}, {"answers.seat": "staff_only"}),
    ({"diet": "fish", "age": 5}, {"answers.diet": "not_an_option", "answers.age": "too_small"}),
]


@pytest.mark.parametrize(("answers", "codes"), REFUSED)
def test_invalid_answers_are_refused_each_with_its_code(answers, codes):
    assert refused({**BASE, **answers}) == codes


def test_an_unknown_identifier_is_refused_with_the_list_of_valid_ones():
    with pytest.raises(AnswersInvalid) as caught:
        validate_answers(questions=FORM, answers={**BASE, "shoe_size": "42"})
    error = caught.value
    assert (error.code, error.reason) == ("INVALID_INPUT", "ANSWERS_INVALID")
    assert "seat" not in error.extra["validIdentifiers"]
    assert {"diet", "diet_other", "photo_ok"} <= set(error.extra["validIdentifiers"])


def test_the_organisers_answer_their_own_questions_and_an_attendee_keeps_them_unseen():
    assert valid({**BASE, "seat": "A1"}, staff=True)["seat"] == "A1"
    kept = {"seat": {"value": "A1", "label": {"en": "Seat"}}}
    stored = validate_answers(questions=FORM, answers=BASE, kept=kept)
    assert stored["seat"] == kept["seat"]


def test_each_answer_keeps_the_label_it_answered():
    stored = validate_answers(questions=FORM, answers=BASE)
    assert stored["diet"] == {"value": "none", "label": {"en": "Diet", "zh-hant": "問"}}


def test_a_form_without_questions_takes_no_answers():
    assert validate_answers(questions=(), answers={}) == {}
    with pytest.raises(AnswersInvalid):
        validate_answers(questions=(), answers={"anything": 1})
