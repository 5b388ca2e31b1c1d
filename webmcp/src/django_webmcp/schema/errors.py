"""What every schema source shares: the error for a field without a faithful schema, the empty input."""

from __future__ import annotations

from typing import Any


class SchemaGenerationError(ValueError):
    """A field has no faithful JSON Schema; names the class (serializer or form) and the field."""

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
