"""Test helpers for sites that use django-webmcp.

- `django_webmcp.testing.browser`: a page's tools in a real Chromium (list, call, confirm), the same on
  every Chromium version; needs Playwright (the `[testing]` extra) and a Chromium with WebMCP.
- `django_webmcp.testing.mcp`: `mcp_client`, the MCP SDK's client on your `/mcp`, in-process or over HTTP.
- `django_webmcp.testing.catalogue`: `assert_catalogue_unchanged`, the catalogue-drift assertion.
- `django_webmcp.testing.plugin`: the pytest fixtures (`webmcp_browser`, `webmcp_page`,
  `webmcp_mcp_client`, `webmcp_catalogue`), loaded automatically by pytest.

Nothing is imported here, so importing one helper never loads Django, Playwright or the MCP SDK.
"""
