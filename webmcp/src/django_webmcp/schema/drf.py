"""JSON Schema for a tool's input and output, derived from the DRF serializers that validate and render
them (the `[drf]` extra).

The schema an agent sees and the validation the server applies must never drift apart, so the schema
is generated from the serializer, never written by hand: change a field and the schema follows.
A field this module cannot describe faithfully raises `SchemaGenerationError` instead of being
approximated, because a schema that lies to the agent is worse than a start-up error.
"""

from __future__ import annotations

import collections.abc
import copy
import re
import types
import typing
from collections.abc import Callable
from decimal import Decimal
from typing import Any, cast

from django.core.validators import RegexValidator, URLValidator
from rest_framework import serializers

from django_webmcp.schema.errors import SchemaGenerationError, empty_object_schema


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


# ── output: what a serializer renders ──────────────────────────────────────────────────────────


def output_schema(serializer_class: type[serializers.BaseSerializer]) -> dict[str, Any]:
    """Describe what `serializer_class` renders as a JSON Schema object (MCP's `outputSchema`).

    Every readable field is described. A method field or a custom field is described by what its
    author declared, in this order: drf-spectacular's `@extend_schema_field` on the method or the
    field's class (a JSON Schema dict, a field or a serializer; read from the attribute the decorator
    sets, so drf-spectacular need not be installed to read it), then the method's return annotation
    (`str`, `int`, `float`, `bool`, `dict`, `list[…]`, `… | None`). A field that declares nothing is
    `{}`, any value, which is true rather than a guess. No key is marked required and extra keys are
    allowed: a serializer's `to_representation` may leave some out or add some, and an output schema
    must never reject what the tool really answers.
    """
    serializer = serializer_class()
    return _rendered(serializer, set())


def _rendered(field: Any, seen: set[type]) -> dict[str, Any]:
    if isinstance(field, serializers.ListSerializer):
        schema: dict[str, Any] = {"type": "array", "items": _rendered(field.child, seen)}
    elif isinstance(field, serializers.Serializer):
        kind = type(field)
        if kind in seen:  # a recursive serializer: say "an object", do not loop
            schema = {"type": "object"}
        else:
            properties = {
                name: _rendered(child, seen | {kind})
                for name, child in field.fields.items()
                if not child.write_only
            }
            schema = {"type": "object", "properties": properties}
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array", "items": _rendered(field.child, seen)}
    elif (declared := _declared(field)) is not None:
        schema = _rendered_declaration(declared, seen)
    elif isinstance(field, serializers.SerializerMethodField):
        schema = _annotated(_method_of(field))
    else:
        schema = _rendered_value(field)
    if getattr(field, "allow_null", False) and "type" in schema:
        schema["type"] = [schema["type"], "null"]
    help_text = getattr(field, "help_text", None)
    if help_text:
        schema["description"] = str(help_text)
    return schema


_RENDERED_FORMATS: tuple[tuple[type[serializers.Field], dict[str, Any]], ...] = (
    (serializers.DateTimeField, {"type": "string", "format": "date-time"}),
    (serializers.DateField, {"type": "string", "format": "date"}),
    (serializers.TimeField, {"type": "string", "format": "time"}),
    (serializers.DurationField, {"type": "string"}),
    (serializers.EmailField, {"type": "string", "format": "email"}),
    (serializers.URLField, {"type": "string", "format": "uri"}),
    (serializers.UUIDField, {"type": "string", "format": "uuid"}),
    (serializers.BooleanField, {"type": "boolean"}),
    (serializers.IntegerField, {"type": "integer"}),
    (serializers.FloatField, {"type": "number"}),
    (serializers.DictField, {"type": "object"}),
)


def _rendered_value(field: Any) -> dict[str, Any]:
    if isinstance(field, serializers.ChoiceField):
        return {"enum": list(field.choices)}
    if isinstance(field, serializers.DecimalField):
        from rest_framework.settings import api_settings  # noqa: PLC0415 (read at use: settings may change)

        as_text = getattr(field, "coerce_to_string", api_settings.COERCE_DECIMAL_TO_STRING)
        return {"type": "string"} if as_text else {"type": "number"}
    for kind, schema in _RENDERED_FORMATS:
        if isinstance(field, kind):
            return dict(schema)
    if isinstance(field, serializers.CharField):
        return {"type": "string"}
    return {}


# ── what an author declared: drf-spectacular's field annotation, a method's return annotation ──────


def _method_of(field: serializers.SerializerMethodField) -> Any:
    return getattr(type(field.parent), field.method_name, None)


def _declared(field: Any) -> Any | None:
    """The value of drf-spectacular's `@extend_schema_field` on `field`'s method or class, or None."""
    owners = [type(field)]
    if isinstance(field, serializers.SerializerMethodField):
        owners.insert(0, _method_of(field))
    for owner in owners:
        annotation = getattr(owner, "_spectacular_annotation", None)
        if isinstance(annotation, dict) and annotation.get("field") is not None:
            return annotation["field"]
    return None


def _rendered_declaration(declared: Any, seen: set[type]) -> dict[str, Any]:
    if isinstance(declared, dict):
        return copy.deepcopy(declared)
    if isinstance(declared, type) and issubclass(declared, serializers.Field):
        declared = declared()
    if isinstance(declared, serializers.Field):
        if _declared(declared) in (declared, type(declared)):  # a class annotated with itself: no loop
            return _rendered_value(declared)
        return _rendered(declared, seen)
    return {}  # an OpenApiTypes member or anything else: not guessed


_ANNOTATED: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    dict: {"type": "object"},
}


def _annotated(method: Any) -> dict[str, Any]:
    """The schema of a method field from its method's return annotation; `{}` where there is none or it
    says nothing this module can map."""
    if method is None:
        return {}
    try:
        hint = typing.get_type_hints(method).get("return")
    except (NameError, TypeError):  # a name imported only for type checking: nothing to read
        return {}
    return _hinted(hint)


def _hinted(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kept = [argument for argument in arguments if argument is not type(None)]
        if len(kept) != 1:
            return {}
        schema = _hinted(kept[0])
        if len(kept) < len(arguments) and "type" in schema:
            schema["type"] = [schema["type"], "null"]
        return schema
    if origin in (list, collections.abc.Sequence) or hint is list:
        return {"type": "array", "items": _hinted(arguments[0]) if arguments else {}}
    if origin is tuple or hint is tuple:
        alike = len(arguments) == 2 and arguments[1] is Ellipsis  # tuple[X, ...]
        return {"type": "array", "items": _hinted(arguments[0]) if alike else {}}
    if origin in (dict, collections.abc.Mapping) or hint is dict:
        return {"type": "object"}
    return dict(_ANNOTATED.get(hint, {}))
