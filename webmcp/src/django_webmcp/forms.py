"""Declarative WebMCP tools from Django forms — EXPERIMENTAL.

The draft's declarative API (`<form toolname tooldescription>`, `toolparamdescription` on a control)
is still an explainer, not the specification, and browsers derive the schema themselves: no annotations,
no `maxLength` or `additionalProperties`, and omitted fields keep the form's values. Prefer imperative
tools (`ToolDeclaration`) for anything consequential; use these for a simple form a person fills in too,
where the browser's own confirmation (without `toolautosubmit`, the call waits for the person's submit)
is what you want.

- `{% webmcp_form_attrs "book_table" "Book a table for a date." %}` inside a `<form …>` tag writes
  ` toolname="book_table" tooldescription="Book a table for a date."` (checked like an imperative tool's
  name and description; `autosubmit=True` adds `toolautosubmit`; `title=` adds `tooltitle`);
- `DeclarativeToolFormMixin` puts `toolparamdescription` on each field's widget from its `help_text`
  (text you wrote, never your users'). `toolparamtitle` is never written: no browser reads it.

Everything written is literal text from your code: never put users' or organisers' text in tool metadata.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString

from django_webmcp.registry import TOOL_NAME_PATTERN

#: The attribute a control's parameter description goes in (the draft's explainer).
PARAM_DESCRIPTION = "toolparamdescription"


def form_tool_attributes(
    name: str, description: str, *, title: str = "", autosubmit: bool = False
) -> SafeString:
    """` toolname="…" tooldescription="…"` (and `tooltitle`, `toolautosubmit`) for a `<form>` tag."""
    if not TOOL_NAME_PATTERN.fullmatch(name):
        raise ValueError(f"{name!r} is not 1-128 ASCII letters, digits, '_', '-' or '.': browsers refuse it.")
    if not str(description).strip():
        raise ValueError(f"The declarative tool {name!r} has no description: browsers do not register it.")
    html = format_html(' toolname="{}" tooldescription="{}"', name, description)
    if title:
        html += format_html(' tooltitle="{}"', title)
    if autosubmit:
        html += format_html("{}", " toolautosubmit")
    return html


class DeclarativeToolFormMixin(forms.BaseForm):
    """A form whose controls describe themselves to agents: `toolparamdescription` from `help_text`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            if field.help_text and PARAM_DESCRIPTION not in field.widget.attrs:
                field.widget.attrs[PARAM_DESCRIPTION] = str(field.help_text)
