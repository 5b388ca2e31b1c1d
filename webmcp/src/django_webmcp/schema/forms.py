"""JSON Schema for a tool's input, derived from the Django form that validates it (no DRF needed).

As for serializers (`django_webmcp.schema.drf`), the schema is generated from the form the server
validates with, never written by hand, and a field this module cannot describe faithfully raises
`SchemaGenerationError` instead of being approximated. Dispatch is on the exact field class: a subclass
may validate differently.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django import forms
from django.core.validators import RegexValidator

from django_webmcp.schema.errors import SchemaGenerationError


def input_schema(form_class: type[forms.BaseForm]) -> dict[str, Any]:
    """Describe the input `form_class` accepts: one property per field (disabled fields are not input),
    the required ones listed, unknown keys refused (`additionalProperties: false`)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in form_class().fields.items():
        if field.disabled or isinstance(field.widget, forms.HiddenInput):
            continue
        properties[name] = _field_schema(form_class, name, field)
        if field.required:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _field_schema(form_class: type, name: str, field: forms.Field) -> dict[str, Any]:
    builder = _BUILDERS.get(type(field))
    if builder is None:
        supported = ", ".join(sorted(cls.__name__ for cls in _BUILDERS))
        raise SchemaGenerationError(
            form_class, name, f"{type(field).__name__} is not supported (supported: {supported})"
        )
    schema = builder(form_class, name, field)
    if field.help_text:
        schema["description"] = str(field.help_text)
    return schema


def _string(form_class: type, name: str, field: forms.CharField) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if field.max_length is not None:
        schema["maxLength"] = int(field.max_length)
    min_length = int(field.min_length or 0)
    if field.required:
        min_length = max(min_length, 1)  # an empty string is "missing" to a form
    if min_length:
        schema["minLength"] = min_length
    patterns = [v for v in field.validators if type(v) is RegexValidator]
    if len(patterns) > 1:
        raise SchemaGenerationError(form_class, name, "more than one regular expression validator")
    if patterns:
        validator = patterns[0]
        pattern = getattr(validator.regex, "pattern", validator.regex)
        if validator.inverse_match or not isinstance(pattern, str) or "(?P=" in pattern or r"\Z" in pattern:
            raise SchemaGenerationError(form_class, name, f"a Python-only regular expression {pattern!r}")
        schema["pattern"] = pattern.replace(r"\A", "^").replace("(?P<", "(?<")
    return schema


def _with_format(fmt: str) -> Callable[[type, str, Any], dict[str, Any]]:
    def build(form_class: type, name: str, field: Any) -> dict[str, Any]:
        return {**_string(form_class, name, field), "format": fmt}

    return build


def _number(json_type: str) -> Callable[[type, str, Any], dict[str, Any]]:
    def build(form_class: type, name: str, field: Any) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": json_type}
        if field.min_value is not None:
            schema["minimum"] = _json_number(field.min_value)
        if field.max_value is not None:
            schema["maximum"] = _json_number(field.max_value)
        return schema

    return build


def _json_number(value: Any) -> int | float:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value  # type: ignore[no-any-return]


def _boolean(form_class: type, name: str, field: forms.Field) -> dict[str, Any]:
    return {"type": "boolean"}


def _choices(field: forms.ChoiceField) -> list[Any]:
    values: list[Any] = []
    choices: Any = field.choices  # normalized by the field to a list of pairs (or option groups)
    for value, label in choices:
        if isinstance(label, list | tuple):  # an option group
            values.extend(inner for inner, _ in label)
        else:
            values.append(value)
    return values


def _choice(form_class: type, name: str, field: forms.ChoiceField) -> dict[str, Any]:
    values = _choices(field)
    if field.required:
        values = [value for value in values if value != ""]
    schema: dict[str, Any] = {}
    if values and all(isinstance(value, str) for value in values):
        schema["type"] = "string"
    schema["enum"] = values
    return schema


def _multiple_choice(form_class: type, name: str, field: forms.MultipleChoiceField) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": {"enum": _choices(field)}, "uniqueItems": True}
    if field.required:
        schema["minItems"] = 1
    return schema


def _date(fmt: str) -> Callable[[type, str, Any], dict[str, Any]]:
    def build(form_class: type, name: str, field: Any) -> dict[str, Any]:
        return {"type": "string", "format": fmt}

    return build


_BUILDERS: dict[type[forms.Field], Callable[[type, str, Any], dict[str, Any]]] = {
    forms.CharField: _string,
    forms.RegexField: _string,
    forms.SlugField: _string,
    forms.EmailField: _with_format("email"),
    forms.URLField: _with_format("uri"),
    forms.IntegerField: _number("integer"),
    forms.FloatField: _number("number"),
    forms.DecimalField: _number("number"),
    forms.BooleanField: _boolean,
    forms.ChoiceField: _choice,
    forms.MultipleChoiceField: _multiple_choice,
    forms.DateField: _date("date"),
    forms.DateTimeField: _date("date-time"),
    forms.TimeField: _date("time"),
}
