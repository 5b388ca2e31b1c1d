"""django-webmcp's own suite: which settings project runs (DJANGO_SETTINGS_MODULE, one of tests/settings),
and which code it runs (the built wheel under nox: WEBMCP_EXPECT_INSTALLED=1 makes sure of it)."""

from __future__ import annotations

import copy
import os

import django_webmcp
import pytest
from django.conf import settings

from tests.testapp import data

ORIGINAL_ITEMS = copy.deepcopy(data.ITEMS)


def pytest_report_header(config):
    return (
        f"django_webmcp from {os.path.dirname(django_webmcp.__file__)}; settings {settings.SETTINGS_MODULE}"
    )


def pytest_sessionstart(session):
    if os.environ.get("WEBMCP_EXPECT_INSTALLED") == "1" and "site-packages" not in django_webmcp.__file__:
        pytest.exit(f"expected the installed wheel, got {django_webmcp.__file__}", 3)


@pytest.fixture(autouse=True)
def _fresh_items():
    data.ITEMS.clear()
    data.ITEMS.update(copy.deepcopy(ORIGINAL_ITEMS))


def needs(flag: str):
    """Skip unless the settings project has this optional part (TEST_WITH_DRF, TEST_WITH_MCP, …)."""
    return pytest.mark.skipif(
        not getattr(settings, flag, False), reason=f"this settings project has no {flag}"
    )


#: Pages are behind LoginRequiredMiddleware in that settings project (only /mcp and the metadata are open).
pages_open = pytest.mark.skipif(
    getattr(settings, "TEST_LOGIN_REQUIRED", False),
    reason="pages need a session under LoginRequiredMiddleware",
)
