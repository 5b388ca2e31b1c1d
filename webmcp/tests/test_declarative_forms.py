"""EXPERIMENTAL declarative form helpers: `toolname`/`tooldescription` on the form, parameter
descriptions from help_text, never `toolparamtitle`."""

from __future__ import annotations

import pytest
from django.test import Client
from django_webmcp.forms import form_tool_attributes

from tests.conftest import pages_open
from tests.testapp.forms import NoteForm


def test_the_form_attributes_are_escaped_literal_text():
    html = form_tool_attributes("write_note", 'Write "a" note', title="Note", autosubmit=True)
    assert (
        html
        == ' toolname="write_note" tooldescription="Write &quot;a&quot; note" tooltitle="Note" toolautosubmit'
    )


@pytest.mark.parametrize("name, description", [("bad name", "ok"), ("ok", "  ")])
def test_a_name_or_description_browsers_refuse_is_refused_here(name, description):
    with pytest.raises(ValueError):
        form_tool_attributes(name, description)


def test_the_mixin_describes_parameters_from_help_text():
    html = str(NoteForm()["text"])
    assert 'toolparamdescription="What to write down."' in html
    assert "toolparamtitle" not in html


@pages_open
def test_the_page_renders_the_declarative_form():
    html = Client().get("/").content.decode()
    assert 'toolname="write_note"' in html and "toolparamdescription" in html
