"""Every environment variable the settings read is in docs/configuration.md's table, so a new
setting cannot ship undocumented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.unit

SETTINGS = Path(settings.BASE_DIR) / "config" / "settings.py"
DOC = Path(settings.BASE_DIR) / "docs" / "configuration.md"
# os.environ.get("X"), os.environ["X"], the env_* helpers and dj-database-url's env="X".
READ = re.compile(r'(?:environ(?:\.get\(|\[)|env_\w+\(|env=)\s*"([A-Z][A-Z0-9_]+)"')


def configuration_table() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("\n## ", 1)[0]


def test_every_variable_the_settings_read_is_documented():
    read = set(READ.findall(SETTINGS.read_text(encoding="utf-8")))
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", configuration_table()))
    # The pattern finds each way of reading one (a call split over lines, a helper, dj-database-url).
    assert {"DATABASE_URL", "SECRET_KEY", "EMAIL_BACKEND", "NOTIFICATION_RETRY_DELAYS"} <= read
    assert sorted(read - documented) == []
