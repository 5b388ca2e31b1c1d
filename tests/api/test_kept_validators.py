"""core.inputs validates with one kept serializer per input, language and thread instead of a new one
per call (bench/profiles/README.md), and every input each time. These tests hold its
answers, refusals and their words equal to what a new serializer's `is_valid()` gives, in each
language and time zone, whichever came first, and each caller's answer its own."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.conf import settings
from django.http import QueryDict
from django.utils import timezone, translation
from rest_framework import serializers

from core.errors import InvalidInput, UnknownParameter
from core.inputs import validated_input
from events.contract import (
    AttendeeRefInput,
    CheckInInput,
    EventRefInput,
    EventSearchInput,
    EventSearchPageInput,
    FindAttendeeInput,
    NoInput,
    RegistrationRefInput,
)

pytestmark = pytest.mark.unit

LANGUAGES = [code for code, _ in settings.LANGUAGES]

#: Valid and invalid inputs of every kind of field the inputs declare: choices, lengths, ranges,
#: patterns, types, blank and NUL text, a serializer-wide rule (CheckInInput.validate).
CASES: list[tuple[type[serializers.Serializer], dict[str, Any]]] = [
    (EventSearchPageInput, {"location": "taipei", "price": "free", "level": "beginner"}),
    (EventSearchPageInput, {}),
    (EventSearchPageInput, {"limit": "999", "offset": "-1"}),
    (EventSearchPageInput, {"limit": "0", "offset": "1000000"}),
    (EventSearchPageInput, {"limit": "ten", "location": "mars", "query": "x" * 500}),
    (EventSearchPageInput, {"query": "a\x00b", "level": ""}),
    (EventSearchInput, {"query": " 工作坊 ", "price": "paid"}),
    (EventRefInput, {"event_id": "evt-webmcp-intro"}),
    (EventRefInput, {"event_id": "not an id"}),
    (EventRefInput, {"event_id": "evt-" + "a" * 100}),
    (EventRefInput, {}),
    (RegistrationRefInput, {"registration_id": "0"}),
    (AttendeeRefInput, {"event_id": "evt-a", "attendee_id": "x"}),
    (CheckInInput, {"event_id": "evt-a"}),
    (CheckInInput, {"event_id": "evt-a", "ticket": "T", "attendee_id": 3}),
    (CheckInInput, {"event_id": "evt-a", "ticket": "T", "scan_id": "nope", "scanned_at": "yesterday"}),
    (FindAttendeeInput, {"event_id": "evt-a", "query": "q" * 101}),
    (NoInput, {}),
]


def fresh(serializer_class: type[serializers.Serializer], data: dict[str, Any]) -> Any:
    """What a new serializer says of `data`, as JSON would carry it: the data or the errors."""
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return ("valid", dict(serializer.validated_data))
    return ("invalid", _plain(serializer.errors))


def kept(serializer_class: type[serializers.Serializer], data: dict[str, Any]) -> Any:
    try:
        return ("valid", validated_input(serializer_class, data))
    except UnknownParameter:
        raise
    except InvalidInput as error:
        return ("invalid", _plain(error.extra["fields"]))


def _plain(errors: Any) -> Any:
    """Errors with their words (and codes) as strings, so that two languages can be compared."""
    if isinstance(errors, dict):
        return {key: _plain(value) for key, value in errors.items()}
    if isinstance(errors, list):
        return [_plain(value) for value in errors]
    return (str(errors), getattr(errors, "code", None))


@pytest.mark.parametrize("first", LANGUAGES)
def test_every_input_answers_as_a_new_serializer_in_every_language_whichever_came_first(first):
    order = [first, *(code for code in LANGUAGES if code != first)]
    for language in order + order:  # the second round uses what the first round kept
        with translation.override(language):
            for serializer_class, data in CASES:
                assert kept(serializer_class, data) == fresh(serializer_class, data), (
                    language,
                    serializer_class.__name__,
                    data,
                )


def test_a_range_refusal_is_in_the_language_of_the_request_that_made_it():
    """DRF formats a length or range message once, when it is first shown; a kept serializer shared
    by two languages would answer the second in the first's words."""
    words = {}
    for language in ("zh-hant", "en", "zh-hant"):
        with translation.override(language):
            with pytest.raises(InvalidInput) as refused:
                validated_input(EventSearchPageInput, {"limit": "999"})
            words.setdefault(language, set()).add(str(refused.value.extra["fields"]["limit"][0]))
    assert words["en"] == {"Ensure this value is less than or equal to 50."}
    assert len(words["zh-hant"]) == 1
    assert words["zh-hant"] != words["en"]


def test_a_query_is_refused_as_before_repeated_and_unknown_keys_first():
    with pytest.raises(InvalidInput) as repeated:
        validated_input(EventSearchPageInput, QueryDict("level=beginner&level=advanced&limit=999"))
    assert repeated.value.extra["fields"] == {"level": ["Give this parameter once."]}
    with pytest.raises(UnknownParameter) as unknown:
        validated_input(EventSearchPageInput, QueryDict("where=taipei&limit=999"))
    assert unknown.value.extra["fields"] == {"where": ["This parameter is not accepted."]}
    assert validated_input(EventSearchPageInput, QueryDict("location=taipei&price=")) == {
        "location": "taipei",
        "price": "",
        "limit": 10,
        "offset": 0,
    }


def test_threads_validate_side_by_side_with_the_same_answers():
    """Each thread keeps its own instances: DRF's first formatting of a message is not thread-safe."""
    problems: list[str] = []

    def run() -> None:
        with translation.override("en"):
            for _ in range(20):
                for serializer_class, data in CASES:
                    if kept(serializer_class, data) != expected[id(data)]:
                        problems.append(f"{serializer_class.__name__} {data}")

    with translation.override("en"):
        expected = {id(data): fresh(cls, data) for cls, data in CASES}
    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []


def test_a_remembered_answer_is_each_callers_own():
    first = validated_input(EventSearchPageInput, {"location": "taipei"})
    first["limit"] = 99
    assert validated_input(EventSearchPageInput, {"location": "taipei"})["limit"] == 10
    with pytest.raises(InvalidInput) as refused:
        validated_input(EventSearchPageInput, {"limit": "0"})
    refused.value.extra["fields"]["limit"].append("changed by its caller")
    with pytest.raises(InvalidInput) as again:
        validated_input(EventSearchPageInput, {"limit": "0"})
    assert _plain(again.value.extra["fields"]) == fresh(EventSearchPageInput, {"limit": "0"})[1]


@pytest.mark.parametrize("zone", ["Asia/Taipei", "UTC", "America/New_York"])
def test_a_time_without_an_offset_is_read_in_the_current_zone_each_time(zone):
    data = {"event_id": "evt-a", "ticket": "T", "scanned_at": "2026-12-04T10:00:00"}
    for _ in range(2):
        with timezone.override(zone):
            assert kept(CheckInInput, data) == fresh(CheckInInput, data)
            assert validated_input(CheckInInput, data)["scanned_at"].utcoffset() is not None
