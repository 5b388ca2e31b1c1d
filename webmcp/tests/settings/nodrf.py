"""Without DRF and without MCP: tools from Django forms and plain JSON Schema only."""

from tests.settings.base import *  # noqa: F403
