"""Template source hygiene: Django's {# #} comments are single-line; a multi-line one is shown."""

from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.unit


def test_no_multi_line_hash_comments_in_templates():
    offenders = [
        f"{path.relative_to(settings.BASE_DIR)}:{number}"
        for path in Path(settings.BASE_DIR, "templates").rglob("*.html")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "{#" in line and "#}" not in line.split("{#", 1)[1]
    ]
    assert offenders == []
