"""`/llms.txt` (E2): what Lighthouse's agentic-browsing category reads, checked without a browser.

Lighthouse 13's `llms-txt` audit wants Markdown with an H1, at least one link and more than a few
characters; we also want every tool of the registry described and no event data in the text.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from tests.factories import EventFactory
from webmcp.registry import registry
from webmcp.routing import url_template

pytestmark = pytest.mark.django_db

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
