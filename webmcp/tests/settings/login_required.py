"""The MCP project behind Django's LoginRequiredMiddleware: /mcp and the OAuth metadata stay reachable
(callers sign in with a bearer token), the pages do not."""

from tests.settings.mcp import *  # noqa: F403
from tests.settings.mcp import MIDDLEWARE

MIDDLEWARE = [*MIDDLEWARE, "django.contrib.auth.middleware.LoginRequiredMiddleware"]
TEST_LOGIN_REQUIRED = True
LOGIN_URL = "/accounts/login/"
