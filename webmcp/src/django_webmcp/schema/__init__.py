"""JSON Schema for a tool's input (and output), from what the server validates with.

A tool's input is declared by one of:

- a DRF serializer class (the `[drf]` extra): `django_webmcp.schema.drf`;
- a Django form class: `django_webmcp.schema.forms` (no DRF needed);
- a plain JSON Schema dict (an object schema), taken as it is: the view that serves the tool validates
  the input itself.

Whatever the source, the schema an agent sees is generated from it, never written a second time.
"""

from __future__ import annotations

import copy
from typing import Any

from django.forms import BaseForm

from django_webmcp.schema.errors import SchemaGenerationError, empty_object_schema

__all__ = ["SchemaGenerationError", "empty_object_schema", "input_schema", "is_serializer", "output_schema"]


def is_serializer(source: Any) -> bool:
    """A DRF serializer class (False when DRF is not installed)."""
    try:
        from rest_framework.serializers import BaseSerializer  # noqa: PLC0415 (optional: the [drf] extra)
    except ImportError:
        return False
    return isinstance(source, type) and issubclass(source, BaseSerializer)


def _is_form(source: Any) -> bool:
    return isinstance(source, type) and issubclass(source, BaseForm)


def _plain(source: dict[str, Any], what: str) -> dict[str, Any]:
    if source.get("type") != "object":
        raise TypeError(f"A plain JSON Schema {what} must be an object schema ({{'type': 'object', …}}).")
    return copy.deepcopy(source)


def input_schema(source: Any) -> dict[str, Any]:
    """The JSON Schema of the input `source` accepts (see the module's docstring); `{}` input for None."""
    if source is None:
        return empty_object_schema()
    if isinstance(source, dict):
        return _plain(source, "input")
    if _is_form(source):
        from django_webmcp.schema import forms as form_schema  # noqa: PLC0415 (circular: schema ↔ forms)

        return form_schema.input_schema(source)
    if is_serializer(source):
        from django_webmcp.schema import drf  # noqa: PLC0415 (optional: the [drf] extra)

        return drf.input_schema(source)
    raise TypeError(
        f"{source!r} is not a tool input: give a DRF serializer class, a Django form class or a JSON "
        "Schema dict (DRF serializers need the [drf] extra)."
    )


def output_schema(source: Any) -> dict[str, Any] | None:
    """The JSON Schema of what a tool answers: from a DRF serializer class, or a plain dict; None when
    the tool declares none."""
    if source is None:
        return None
    if isinstance(source, dict):
        return _plain(source, "output")
    if is_serializer(source):
        from django_webmcp.schema import drf  # noqa: PLC0415 (optional: the [drf] extra)

        return drf.output_schema(source)
    raise TypeError(f"{source!r} is not a tool output: give a DRF serializer class or a JSON Schema dict.")
