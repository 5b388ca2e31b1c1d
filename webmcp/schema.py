"""JSON Schema for a tool's input, derived from the DRF serializer that validates it.

The schema an agent sees and the validation the server applies must never drift apart, so the schema
is generated from the serializer, never written by hand: change a field and the schema follows.
A field this module cannot describe faithfully raises `SchemaGenerationError` instead of being
approximated, because a schema that lies to the agent is worse than a start-up error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, cast

from django.core.validators import RegexValidator, URLValidator
from rest_framework import serializers


class SchemaGenerationError(ValueError):
    """A serializer field has no faithful JSON Schema; names the serializer and the field."""

    def __init__(self, serializer_class: type, field_name: str, problem: str) -> None:
        self.serializer_class = serializer_class
        self.field_name = field_name
        super().__init__(
            f"Cannot generate a JSON Schema for {serializer_class.__name__}.{field_name}: {problem}"
        )


def empty_object_schema() -> dict[str, Any]:
    """The schema of a tool that takes no input, such as a route-bound tool whose one parameter comes
    from the page's URL. A fresh dict each time, so no caller can change another's schema."""
    return {"type": "object", "properties": {}, "additionalProperties": False}


def input_schema(serializer_class: type[serializers.Serializer] | None) -> dict[str, Any]:
    """Describe the input `serializer_class` accepts as a JSON Schema object.

    Read-only and hidden fields are not input, so they are left out. Unknown keys are refused by
    the server, hence `additionalProperties: false`.
    """
    if serializer_class is None:
        return empty_object_schema()
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in serializer_class().fields.items():
        if field.read_only or isinstance(field, serializers.HiddenField):
            continue
        properties[name] = _field_schema(serializer_class, name, field)
        if field.required:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _field_schema(serializer_class: type, name: str, field: serializers.Field) -> dict[str, Any]:
    """Dispatch on the exact field class: a subclass may validate differently, so it is refused."""
    builder = _BUILDERS.get(type(field))
    if builder is None:
        supported = ", ".join(sorted(cls.__name__ for cls in _BUILDERS))
        raise SchemaGenerationError(
            serializer_class, name, f"{type(field).__name__} is not supported (supported: {supported})"
        )
    schema = builder(serializer_class, name, field)
    if field.allow_null:
        # The server accepts null for this field, so the schema must too.
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        if "type" in schema:
            schema["type"] = [schema["type"], "null"]
    if field.help_text:
        schema["description"] = str(field.help_text)
    return schema


def _string_schema(serializer_class: type, name: str, field: serializers.CharField) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if field.max_length is not None:
        schema["maxLength"] = field.max_length
    min_length = field.min_length or 0
    if not field.allow_blank:
        min_length = max(min_length, 1)
    if min_length:
        schema["minLength"] = min_length
    patterns = [
        validator
        for validator in field.validators
        if isinstance(validator, RegexValidator) and not isinstance(validator, URLValidator)
    ]
    if len(patterns) > 1:
        raise SchemaGenerationError(serializer_class, name, "more than one regular expression validator")
    if patterns:
        schema["pattern"] = _ecma_pattern(serializer_class, name, patterns[0])
    return schema


def _email_schema(serializer_class: type, name: str, field: serializers.EmailField) -> dict[str, Any]:
    return {**_string_schema(serializer_class, name, field), "format": "email"}


def _url_schema(serializer_class: type, name: str, field: serializers.URLField) -> dict[str, Any]:
    return {**_string_schema(serializer_class, name, field), "format": "uri"}


def _choice_schema(serializer_class: type, name: str, field: serializers.ChoiceField) -> dict[str, Any]:
    values = list(field.choices)
    if field.allow_blank and "" not in values:
        values.insert(0, "")  # first, where a form puts its "any" option
    schema: dict[str, Any] = {}
    if values and all(isinstance(value, str) for value in values):
        schema["type"] = "string"
    elif values and all(isinstance(value, int) and not isinstance(value, bool) for value in values):
        schema["type"] = "integer"
    schema["enum"] = values
    return schema


def _number_schema(json_type: str) -> Callable[[type, str, serializers.Field], dict[str, Any]]:
    def build(serializer_class: type, name: str, field: serializers.Field) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": json_type}
        minimum = getattr(field, "min_value", None)
        if minimum is not None:
            schema["minimum"] = _json_number(minimum)
        maximum = getattr(field, "max_value", None)
        if maximum is not None:
            schema["maximum"] = _json_number(maximum)
        return schema

    return build


def _boolean_schema(serializer_class: type, name: str, field: serializers.BooleanField) -> dict[str, Any]:
    return {"type": "boolean"}


def _object_schema(serializer_class: type, name: str, field: serializers.DictField) -> dict[str, Any]:
    """An object whose keys the server checks itself (a route-bound tool may say more on its page:
    `ToolDeclaration.route_schema`)."""
    return {"type": "object"}


def _json_number(value: int | float | Decimal) -> int | float:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


# Python-only regular expression syntax and its ECMAScript spelling (JSON Schema patterns are ECMA 262).
_PYTHON_TO_ECMA = ((r"\A", "^"), (r"\Z", "$"), ("(?P<", "(?<"))
_UNSUPPORTED_REGEX = re.compile(r"\(\?[aiLmsux-]+[:)]|\(\?P=|\\z")


def _ecma_pattern(serializer_class: type, name: str, validator: RegexValidator) -> str:
    """Translate the validator's Python pattern, or refuse one ECMAScript would read differently."""
    if validator.inverse_match:
        raise SchemaGenerationError(serializer_class, name, "an inverse regular expression match")
    # Compiled by RegexValidator.__init__; django-stubs also allow the str a subclass may declare.
    regex = cast("re.Pattern[Any]", validator.regex)
    if regex.flags & ~re.UNICODE:
        raise SchemaGenerationError(serializer_class, name, "regular expression flags")
    pattern = regex.pattern
    if not isinstance(pattern, str) or _UNSUPPORTED_REGEX.search(pattern):
        raise SchemaGenerationError(serializer_class, name, f"Python-only regular expression {pattern!r}")
    for python, ecma in _PYTHON_TO_ECMA:
        pattern = pattern.replace(python, ecma)
    return pattern


_BUILDERS: dict[type[serializers.Field], Callable[[type, str, Any], dict[str, Any]]] = {
    serializers.CharField: _string_schema,
    serializers.RegexField: _string_schema,
    serializers.SlugField: _string_schema,
    serializers.EmailField: _email_schema,
    serializers.URLField: _url_schema,
    serializers.ChoiceField: _choice_schema,
    serializers.IntegerField: _number_schema("integer"),
    serializers.FloatField: _number_schema("number"),
    serializers.DecimalField: _number_schema("number"),
    serializers.BooleanField: _boolean_schema,
    serializers.DictField: _object_schema,
}
