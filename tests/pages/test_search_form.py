"""Contract: the page's search form is EventSearchInput, field for field (no "keep in sync" comment)."""

from __future__ import annotations

import pytest
from django import forms
from django.http import QueryDict
from rest_framework import serializers

from events.contract import EventSearchInput
from events.forms import EventSearchForm

pytestmark = pytest.mark.unit


def test_search_form_fields_equal_the_serializer_fields():
    assert list(EventSearchForm.base_fields) == list(EventSearchInput().fields)


def test_search_form_choices_equal_the_serializer_choices_plus_an_all_choice():
    serializer_fields = EventSearchInput().fields
    for name, field in EventSearchForm.base_fields.items():
        source = serializer_fields[name]
        assert field.required == source.required
        if isinstance(source, serializers.ChoiceField):
            assert isinstance(field, forms.ChoiceField)
            values = [value for value, _label in field.choices]
            assert values[0] == ""
            assert values[1:] == list(source.choices)


def test_search_form_max_length_equals_the_serializer_max_length():
    serializer_fields = EventSearchInput().fields
    for name, field in EventSearchForm.base_fields.items():
        source = serializer_fields[name]
        if isinstance(source, serializers.CharField):
            assert field.max_length == source.max_length
            assert f'maxlength="{source.max_length}"' in str(EventSearchForm()[name])


@pytest.mark.parametrize(
    "query",
    [
        "location=mars",
        "price=cheap",
        "level=expert",
        "query=" + "x" * 101,
        "colour=blue",
        "location=taipei&location=online",
        "page=0",
        "page=two",
        "page=99999999999999999999999",
    ],
)
def test_search_form_refuses_what_the_serializer_or_the_page_refuses(query):
    assert not EventSearchForm(QueryDict(query)).is_valid()


def test_search_form_keeps_only_given_conditions():
    form = EventSearchForm(QueryDict("query=+WebMCP+&location=taipei&price=&level=&page=2"))
    assert form.is_valid(), form.errors
    assert form.conditions == {"query": "WebMCP", "location": "taipei"}
    assert form.page == 2
