"""The generic app is tested with its own defaults, not with this project's vocabulary."""

import pytest


@pytest.fixture(autouse=True)
def _generic_reasons(settings):
    if hasattr(settings, "WEBMCP_REASONS"):
        del settings.WEBMCP_REASONS
