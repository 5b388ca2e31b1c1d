"""docs/settings.md documents every setting, under the one prefix, and no other."""

from __future__ import annotations

import re
from pathlib import Path

from django_webmcp.conf import DEFAULTS

DOC = Path(__file__).resolve().parents[1] / "docs" / "settings.md"


def test_every_setting_is_documented_and_no_other():
    documented = set(re.findall(r"^## `(WEBMCP_\w+)`", DOC.read_text(encoding="utf-8"), re.MULTILINE))
    assert documented == set(DEFAULTS)
    assert all(name.startswith("WEBMCP_") for name in DEFAULTS)
