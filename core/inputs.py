"""Validate a request's input with its one input serializer.

`null` for an optional field means absent; a key the serializer does not know is refused with
UNKNOWN_PARAMETER rather than ignored, so a caller never believes a filter was applied when it was not.

Each input is validated by its serializer's own `run_validation`, the method `is_valid()` runs, on an
instance built once and kept (`_validator`): a new serializer per call deep-copies and binds every
declared field first, which was a tenth of an API search (bench/profiles/README.md). The answers are
the same, errors included: an input serializer validates from its data alone (no context, no
instance), and DRF's length and range messages are formatted once, in the language active at the
first error, so one instance is kept per language (and per thread: that first formatting is not
thread-safe).

And an input of short texts (a query string: a search is asked the same few ways over and over) is
validated once per serializer, language and time zone: the answer, or the refusal's fields, is kept
(`_remembered`, a bounded cache) and each call gets its own dict of it. The declaration stays the one rule;
validating from the data alone, the same text always validates the same way.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Mapping
from typing import Any

from django.utils import timezone, translation
from rest_framework import serializers

from .errors import InvalidInput, UnknownParameter

_validators = threading.local()
#: The longest input (keys and values, in characters) whose answer is kept; longer ones are validated
#: each time, so the cache holds at most REMEMBERED × this much text.
REMEMBERED_LENGTH = 300
REMEMBERED = 1024


def _shown(key: str) -> str:
    """A key as the envelope can echo it: lone surrogates (valid JSON text, not UTF-8) escaped."""
    return key.encode("utf-8", "backslashreplace").decode("utf-8")


def repeated_parameters(data: Mapping[str, Any]) -> list[str]:
    """Keys given more than once in a query string: ambiguous, so refused by every interface."""
    if not hasattr(data, "lists"):
        return []
    return sorted(key for key, values in data.lists() if len(values) > 1)


def unknown_parameters(data: Mapping[str, Any], known: set[str] | frozenset[str]) -> list[str]:
    """Keys no field of the input takes: refused, never ignored."""
    return sorted(_shown(str(key)) for key in set(data) - set(known))


def _validator(
    serializer_class: type[serializers.Serializer],
) -> tuple[serializers.Serializer, frozenset[str]]:
    """The kept instance of `serializer_class` for this thread and language, its fields bound, and
    their names."""
    kept: dict[tuple[type, str | None], tuple[serializers.Serializer, frozenset[str]]]
    kept = _validators.__dict__.setdefault("kept", {})
    key = (serializer_class, translation.get_language())
    if key not in kept:
        validator = serializer_class()
        kept[key] = (validator, frozenset(validator.fields))
    return kept[key]


def validated_input(serializer_class: type[serializers.Serializer], data: object) -> dict[str, Any]:
    """`data` is any parsed input (a JSON body may be a list): only an object is accepted."""
    if not isinstance(data, Mapping):
        raise InvalidInput("The input must be a JSON object.")
    if repeated := repeated_parameters(data):
        raise InvalidInput(extra={"fields": {key: ["Give this parameter once."] for key in repeated}})
    if hasattr(data, "lists"):  # a QueryDict: one value per key from here on
        data = {key: data.get(key) for key in data}
    validator, known = _validator(serializer_class)
    unknown = unknown_parameters(data, known)
    if unknown:
        raise UnknownParameter(
            f"Unknown parameter(s): {', '.join(unknown)}.",
            extra={"fields": {key: ["This parameter is not accepted."] for key in unknown}},
        )
    given = {key: value for key, value in data.items() if value is not None}
    if all(type(value) is str for value in given.values()) and _length(given) <= REMEMBERED_LENGTH:
        language, zone = translation.get_language(), timezone.get_current_timezone_name()
        valid, answer = _remembered(serializer_class, language, zone, tuple(sorted(given.items())))
    else:
        valid, answer = _validated(validator, given)
    if not valid:
        raise InvalidInput(extra={"fields": copy.deepcopy(answer)})
    return dict(answer)


def _length(given: Mapping[str, str]) -> int:
    return sum(len(key) + len(value) for key, value in given.items())


def _validated(validator: serializers.Serializer, given: Mapping[str, Any]) -> tuple[bool, Any]:
    """(True, the validated data) or (False, the refusal's fields)."""
    try:
        return True, validator.run_validation(dict(given))
    except serializers.ValidationError as error:
        return False, error.detail


@functools.lru_cache(maxsize=REMEMBERED)
def _remembered(
    serializer_class: type[serializers.Serializer], language: str | None, zone: str, given: tuple
) -> tuple[bool, Any]:
    """`_validated` of `given` by the kept instance for `language`, in time zone `zone` (DateTimeField
    reads it), kept for the next call with the same text."""
    return _validated(_validator(serializer_class)[0], dict(given))


class _Nothing(serializers.Serializer):
    """Takes nothing: any key is an unknown parameter."""


class NothingBut(dict[str, Any]):
    """What a call takes, as a dict (so its event is known for the call's row even when the rest is
    refused), and as the function `perform` calls to read its input: that first finds each other part
    of the request (its query, its body, or a function that reads one) empty. A key there is refused
    (UNKNOWN_PARAMETER, or repeated, or a body that is not an object), never ignored; read where
    `perform` reads its input, after the token's scope and the write rate."""

    def __init__(self, data: Mapping[str, Any], others: tuple[Any, ...]) -> None:
        super().__init__(data)
        self.others = others

    def __call__(self) -> dict[str, Any]:
        for part in self.others:
            validated_input(_Nothing, part() if callable(part) else part)
        return dict(self)


def nothing_but(data: Mapping[str, Any], *others: Any) -> NothingBut:
    """`data`, with nothing in `others` (see `NothingBut`)."""
    return NothingBut(data, others)
