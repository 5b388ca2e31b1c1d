"""With DRF, MCP and OAuth metadata (the [drf,mcp,oauth] extras): /mcp hides and refuses by scope."""

from tests.settings.drf import *  # noqa: F403
from tests.settings.drf import INSTALLED_APPS

# django-oauth-toolkit (the [oauth] extra), for its metadata adapter.
INSTALLED_APPS = [*INSTALLED_APPS, "oauth2_provider"]

TEST_WITH_MCP = True
WEBMCP_SERVER_NAME = "webmcp-tests"
WEBMCP_SERVER_VERSION = "1.0"
WEBMCP_MCP_HIDE_OUT_OF_SCOPE = True
WEBMCP_OAUTH_RESOURCE = "http://testserver/mcp"
WEBMCP_OAUTH_AUTHORIZATION_SERVERS = ["https://auth.example.org"]
WEBMCP_OAUTH_SCOPES = ["items:read", "items:write"]
WEBMCP_OAUTH_REALM = "tests"
