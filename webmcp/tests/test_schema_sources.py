"""A tool's input from a Django form or a plain JSON Schema dict (no DRF needed); DRF serializers
where the [drf] extra is installed."""

from __future__ import annotations

import pytest
from django import forms
from django_webmcp.schema import SchemaGenerationError, input_schema, output_schema

from tests.conftest import needs
from tests.testapp.forms import SearchForm


def test_a_form_gives_the_schema_it_validates():
    assert input_schema(SearchForm) == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 50, "description": "Words to look for."},
            "kind": {"type": "string", "enum": ["", "tea", "cake"]},
        },
        "additionalProperties": False,
    }


def test_form_fields_map_to_their_json_types():
    class Order(forms.Form):
        count = forms.IntegerField(min_value=1, max_value=9)
        price = forms.DecimalField(min_value=0)
        gift = forms.BooleanField(required=False)
        day = forms.DateField()
        email = forms.EmailField()
        size = forms.ChoiceField(choices=[("s", "S"), ("m", "M")])
        extras = forms.MultipleChoiceField(choices=[("milk", "Milk"), ("ice", "Ice")], required=False)
        code = forms.RegexField(r"^[A-Z]{3}$")

    schema = input_schema(Order)
    assert schema["required"] == ["count", "price", "day", "email", "size", "code"]
    properties = schema["properties"]
    assert properties["count"] == {"type": "integer", "minimum": 1, "maximum": 9}
    assert properties["price"] == {"type": "number", "minimum": 0}
    assert properties["gift"] == {"type": "boolean"}
    assert properties["day"] == {"type": "string", "format": "date"}
    assert properties["email"]["format"] == "email"
    assert properties["size"] == {"type": "string", "enum": ["s", "m"]}
    assert properties["extras"] == {"type": "array", "items": {"enum": ["milk", "ice"]}, "uniqueItems": True}
    assert properties["code"]["pattern"] == "^[A-Z]{3}$"


def test_a_form_field_without_a_faithful_schema_is_refused():
    class Upload(forms.Form):
        file = forms.FileField()

    with pytest.raises(SchemaGenerationError, match=r"Upload\.file: FileField is not supported"):
        input_schema(Upload)


def test_a_plain_schema_is_taken_as_it_is_and_copied():
    given = {"type": "object", "properties": {"id": {"type": "string"}}}
    schema = input_schema(given)
    assert schema == given and schema is not given
    schema["properties"]["id"]["type"] = "integer"
    assert given["properties"]["id"]["type"] == "string"


def test_a_plain_schema_must_be_an_object_schema():
    with pytest.raises(TypeError, match="object schema"):
        input_schema({"type": "string"})


def test_anything_else_is_no_input():
    with pytest.raises(TypeError, match="not a tool input"):
        input_schema(str)


def test_no_output_declared_is_none():
    assert output_schema(None) is None


@needs("TEST_WITH_DRF")
def test_a_serializer_gives_input_and_output_schemas():
    from tests.testapp.tools import LookupInput, LookupOutput

    assert input_schema(LookupInput)["properties"]["name"] == {
        "type": "string",
        "maxLength": 30,
        "minLength": 1,
        "description": "The item's name.",
    }
    assert output_schema(LookupOutput) == {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "price": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "updated": {"type": ["string", "null"], "format": "date-time"},
        },
    }


def _annotated(field: object, value: object) -> object:
    """What drf-spectacular's `@extend_schema_field(value)` leaves on a method or field class."""
    field._spectacular_annotation = {"field": value}  # type: ignore[attr-defined]
    return field


@needs("TEST_WITH_DRF")
def test_a_method_field_is_described_by_its_declaration_or_else_its_return_annotation():
    from rest_framework import serializers

    class Point(serializers.Serializer):
        x = serializers.IntegerField()

    @lambda cls: _annotated(cls, {"type": "object", "additionalProperties": {"type": "string"}})
    class Labels(serializers.Field):
        pass

    class Output(serializers.Serializer):
        count = serializers.SerializerMethodField(help_text="How many.")
        names = serializers.SerializerMethodField()
        pairs = serializers.SerializerMethodField()
        note = serializers.SerializerMethodField()
        facts = serializers.SerializerMethodField()
        point = serializers.SerializerMethodField()
        code = serializers.SerializerMethodField()
        labels = Labels(read_only=True)
        either = serializers.SerializerMethodField()
        bare = serializers.SerializerMethodField()

        def get_count(self, obj) -> int: ...
        def get_names(self, obj) -> list[str]: ...
        def get_pairs(self, obj) -> tuple[int, ...]: ...
        def get_note(self, obj) -> str | None: ...
        def get_facts(self, obj) -> dict[str, int]: ...
        @lambda method: _annotated(method, Point(allow_null=True))
        def get_point(self, obj): ...
        @lambda method: _annotated(method, serializers.CharField(allow_null=True))
        def get_code(self, obj) -> int: ...  # the declaration wins over the annotation
        def get_either(self, obj) -> int | str: ...
        def get_bare(self, obj): ...

    assert output_schema(Output)["properties"] == {
        "count": {"type": "integer", "description": "How many."},
        "names": {"type": "array", "items": {"type": "string"}},
        "pairs": {"type": "array", "items": {"type": "integer"}},
        "note": {"type": ["string", "null"]},
        "facts": {"type": "object"},
        "point": {"type": ["object", "null"], "properties": {"x": {"type": "integer"}}},
        "code": {"type": ["string", "null"]},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "either": {},  # not guessed
        "bare": {},
    }


@needs("TEST_WITH_DRF")
def test_drf_spectacular_leaves_its_declaration_where_it_is_read():
    extend_schema_field = pytest.importorskip("drf_spectacular.utils").extend_schema_field
    from rest_framework import serializers

    class Output(serializers.Serializer):
        size = serializers.SerializerMethodField()

        @extend_schema_field({"type": "integer", "minimum": 0})
        def get_size(self, obj): ...

    assert output_schema(Output)["properties"]["size"] == {"type": "integer", "minimum": 0}


@pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("rest_framework") is not None,
    reason="DRF is installed in this environment",
)
def test_without_drf_a_serializer_like_class_is_not_mistaken_for_one():
    """The package installed without the [drf] extra imports no DRF and still works."""
    import sys

    import django_webmcp.registry  # noqa: F401

    assert "rest_framework" not in sys.modules
