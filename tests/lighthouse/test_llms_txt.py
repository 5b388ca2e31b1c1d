"""`/llms.txt` (E2): what Lighthouse's agentic-browsing category reads, checked without a browser.

Lighthouse 13's `llms-txt` audit wants Markdown with an H1, at least one link and more than a few
characters; we also want every tool of the registry described and no event data in the text.
Evidence levels (E1–E4): docs/evidence.md.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django_webmcp.registry import registry
from django_webmcp.routing import url_template

from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")


@pytest.fixture
def llms_txt(client) -> str:
    response = client.get("/llms.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    return response.content.decode()


def test_llms_txt_follows_the_lighthouse_recommendations(llms_txt):
    # The same three rules as lighthouse/node_modules/lighthouse/core/audits/agentic/llms-txt.js.
    assert re.search(r"^\s*#\s+.+", llms_txt, re.MULTILINE)
    assert re.search(r"\[.+\]\(.+\)", llms_txt)
    assert len(llms_txt) >= 50


def test_llms_txt_describes_every_tool_on_every_route(llms_txt):
    routes = {exposure.url_name for tool in registry.tools() for exposure in tool.exposures}
    for url_name in routes:
        assert f"`{url_template(url_name)}`" in llms_txt
        for tool in registry.catalogue(url_name)["tools"]:
            assert f"`{tool['name']}`" in llms_txt
            assert tool["description"] in llms_txt


def test_llms_txt_links_are_absolute_and_answer(client, llms_txt):
    links = LINK.findall(llms_txt)
    assert len(links) >= 5
    for _title, url in links:
        parts = urlsplit(url)
        assert parts.scheme == "http" and parts.netloc == "testserver", url
        assert client.get(parts.path).status_code < 400, url


@pytest.fixture
def distinctive_event(db):
    return EventFactory(title="Zebra-striped unicorn meetup", summary="Only in the catalogue.")


def test_llms_txt_holds_no_event_data(distinctive_event, llms_txt):
    assert "Zebra-striped" not in llms_txt and "Only in the catalogue" not in llms_txt


def _tool_line(llms_txt: str, url_name: str, tool_name: str) -> str:
    section = llms_txt.split(f"`{url_template(url_name)}`\n", 1)[1].split("\n### ", 1)[0]
    return next(line for line in section.splitlines() if line.startswith(f"- `{tool_name}`"))


def test_llms_txt_promises_exactly_the_declared_hints_and_confirmations(llms_txt):
    """Each tool line carries the hints the browser shows (annotations) and says the person confirms
    only where an exposure on that route waits for their press (checked in tests/browser)."""
    for tool in registry.tools():
        for exposure in tool.exposures:
            line = _tool_line(llms_txt, exposure.url_name, tool.name)
            assert ("read-only" in line) == tool.read_only, line
            assert ("returns text written by people (untrusted)" in line) == tool.untrusted_content, line
            assert ("consequential" in line) == tool.consequential, line
            confirms = any(e.confirm for e in tool.exposures if e.url_name == exposure.url_name)
            assert ("the person confirms each call" in line) == confirms, line
