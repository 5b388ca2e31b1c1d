"""With DRF (the [drf] extra): schemas from serializers too; no MCP."""

from tests.settings.base import *  # noqa: F403
from tests.settings.base import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "rest_framework"]
TEST_WITH_DRF = True
