"""`input_schema`: JSON Schema derived from a DRF serializer, field by field, failing loudly."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.core.validators import RegexValidator
from django_webmcp.schema import SchemaGenerationError, empty_object_schema, input_schema
from rest_framework import serializers

from tests.webmcp.declarations import ItemSearchInput, ItemSearchInputV2

pytestmark = pytest.mark.unit


def schema_of(field: serializers.Field) -> dict:
    """The property schema of `field` as the only field of a serializer."""
    serializer_class = type("OneField", (serializers.Serializer,), {"value": field})
    return input_schema(serializer_class)["properties"]["value"]


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (serializers.CharField(), {"type": "string", "minLength": 1}),
        (
            serializers.CharField(max_length=100, allow_blank=True, help_text="Words to match."),
            {"type": "string", "maxLength": 100, "description": "Words to match."},
        ),
        (
            serializers.CharField(min_length=3, max_length=9),
            {"type": "string", "maxLength": 9, "minLength": 3},
        ),
        (
            serializers.RegexField(r"^itm-[a-z]+$", max_length=40),
            {"type": "string", "maxLength": 40, "minLength": 1, "pattern": "^itm-[a-z]+$"},
        ),
        (
            serializers.RegexField(r"\A(?P<kind>[a-z]+)-\d+\Z"),
            {"type": "string", "minLength": 1, "pattern": r"^(?<kind>[a-z]+)-\d+$"},
        ),
        (
            serializers.CharField(validators=[RegexValidator(r"^[0-9]{4}$")]),
            {"type": "string", "minLength": 1, "pattern": "^[0-9]{4}$"},
        ),
        (serializers.SlugField(), {"type": "string", "minLength": 1, "pattern": r"^[-a-zA-Z0-9_]+$"}),
        (serializers.EmailField(), {"type": "string", "minLength": 1, "format": "email"}),
        (serializers.URLField(), {"type": "string", "minLength": 1, "format": "uri"}),
        (
            serializers.ChoiceField(choices=[("taipei", "Taipei"), ("online", "Online"), ("kaohsiung", "K")]),
            {"type": "string", "enum": ["taipei", "online", "kaohsiung"]},
        ),
        (
            serializers.ChoiceField(choices=["x", "y"], allow_blank=True),
            {"type": "string", "enum": ["", "x", "y"]},
        ),
        (serializers.ChoiceField(choices=[(1, "one"), (2, "two")]), {"type": "integer", "enum": [1, 2]}),
        (serializers.IntegerField(), {"type": "integer"}),
        (
            serializers.IntegerField(min_value=1, max_value=50),
            {"type": "integer", "minimum": 1, "maximum": 50},
        ),
        (serializers.BooleanField(), {"type": "boolean"}),
        (serializers.FloatField(min_value=0.5), {"type": "number", "minimum": 0.5}),
        (
            serializers.DecimalField(
                max_digits=6, decimal_places=2, min_value=Decimal("0"), max_value=Decimal("9.5")
            ),
            {"type": "number", "minimum": 0, "maximum": 9.5},
        ),
        (serializers.IntegerField(allow_null=True), {"type": ["integer", "null"]}),
        (
            serializers.ChoiceField(choices=["x"], allow_null=True),
            {"type": ["string", "null"], "enum": ["x", None]},
        ),
    ],
)
def test_input_schema_describes_each_supported_field(field: serializers.Field, expected: dict) -> None:
    assert schema_of(field) == expected


def test_input_schema_of_a_serializer_lists_required_fields_and_refuses_extra_keys() -> None:
    class Input(serializers.Serializer):
        name = serializers.CharField(max_length=10)
        limit = serializers.IntegerField(required=False, default=10)
        shown = serializers.CharField(read_only=True)
        owner = serializers.HiddenField(default="x")

    assert input_schema(Input) == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 10, "minLength": 1},
            "limit": {"type": "integer"},
        },
        "required": ["name"],
        "additionalProperties": False,
    }


def test_input_schema_omits_required_when_every_field_is_optional() -> None:
    schema = input_schema(ItemSearchInput)
    assert "required" not in schema
    assert schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 100, "description": "Words."},
            "kind": {"type": "string", "enum": ["a", "b"]},
        },
        "additionalProperties": False,
    }


def test_input_schema_of_no_serializer_is_the_empty_object() -> None:
    assert (
        input_schema(None)
        == empty_object_schema()
        == {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }
    )


def test_input_schema_follows_a_changed_serializer() -> None:
    before, after = input_schema(ItemSearchInput), input_schema(ItemSearchInputV2)
    assert before != after
    assert after["properties"]["query"]["maxLength"] == 50


@pytest.mark.parametrize(
    "field",
    [
        serializers.DateField(),
        serializers.ListField(child=serializers.CharField()),
        serializers.MultipleChoiceField(choices=["a"]),
        serializers.UUIDField(),
        serializers.IPAddressField(),
        serializers.JSONField(),
    ],
)
def test_input_schema_refuses_a_field_it_cannot_express(field: serializers.Field) -> None:
    serializer_class = type("Unsupported", (serializers.Serializer,), {"when": field})
    with pytest.raises(SchemaGenerationError, match=r"Unsupported\.when"):
        input_schema(serializer_class)


def test_input_schema_refuses_a_custom_subclass_and_a_nested_serializer() -> None:
    class Trimmed(serializers.CharField):
        pass

    class Inner(serializers.Serializer):
        name = serializers.CharField()

    class Outer(serializers.Serializer):
        inner = Inner()

    with pytest.raises(SchemaGenerationError, match=r"OneField\.value: Trimmed is not supported"):
        schema_of(Trimmed())
    with pytest.raises(SchemaGenerationError, match=r"Outer\.inner"):
        input_schema(Outer)


@pytest.mark.parametrize(
    "validator",
    [
        RegexValidator(r"^[a-z]+$", inverse_match=True),
        RegexValidator(r"^[a-z]+$", flags=re.IGNORECASE),
        RegexValidator(r"(?i)^[a-z]+$"),
        RegexValidator(r"^(?P<x>a)(?P=x)$"),
    ],
)
def test_input_schema_refuses_a_pattern_json_schema_would_read_differently(validator: RegexValidator) -> None:
    with pytest.raises(SchemaGenerationError, match=r"OneField\.value"):
        schema_of(serializers.CharField(validators=[validator]))
