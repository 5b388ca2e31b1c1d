"""Tools are registered by DOMContentLoaded, so agents and audits that read the list once see them."""

import pytest

from harness.tools import manifest

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("path", ["/events/", "/events/evt-webmcp-intro/"])
def test_imperative_tools_are_registered_by_dom_content_loaded(page, path):
    page.add_init_script(
        """document.addEventListener("DOMContentLoaded", () => {
            window.__atDomContentLoaded = document.modelContext.getTools()
                .then((tools) => tools.map((t) => t.name));
        });"""
    )
    page.goto(path)
    at_load = sorted(page.evaluate("() => window.__atDomContentLoaded"))
    imperative = sorted(tool["name"] for tool in manifest(page)["tools"] if tool["binding"] != "form")
    assert imperative and set(imperative) <= set(at_load)
