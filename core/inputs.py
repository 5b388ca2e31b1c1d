"""Validate a request's input with its one input serializer.

`null` for an optional field means absent; a key the serializer does not know is refused with
UNKNOWN_PARAMETER rather than ignored, so a caller never believes a filter was applied when it was not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from .errors import InvalidInput, UnknownParameter


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


def validated_input(serializer_class: type[serializers.Serializer], data: object) -> dict[str, Any]:
    """`data` is any parsed input (a JSON body may be a list): only an object is accepted."""
    if not isinstance(data, Mapping):
        raise InvalidInput("The input must be a JSON object.")
    if repeated := repeated_parameters(data):
        raise InvalidInput(extra={"fields": {key: ["Give this parameter once."] for key in repeated}})
    if hasattr(data, "lists"):  # a QueryDict: one value per key from here on
        data = {key: data.get(key) for key in data}
    serializer = serializer_class(data={key: value for key, value in data.items() if value is not None})
    unknown = unknown_parameters(data, set(serializer.fields))
    if unknown:
        raise UnknownParameter(
            f"Unknown parameter(s): {', '.join(unknown)}.",
            extra={"fields": {key: ["This parameter is not accepted."] for key in unknown}},
        )
    if not serializer.is_valid():
        raise InvalidInput(extra={"fields": serializer.errors})
    return dict(serializer.validated_data)
