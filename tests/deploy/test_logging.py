"""What the site prints: each of Django's log records once, in development as in production.

Logging is configured when Django starts, from DEBUG and LOG_LEVEL, so each case starts a process of
its own with the project's settings.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from django.conf import settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # each test starts a process or a server

# A 4xx as Django's request handler logs it, an INFO record of Django's, and a request line of the
# development server (`make run`).
EMIT = (
    "import logging, django; django.setup(); "
    "logging.getLogger('django.request').warning('Bad Request: /probe-4xx'); "
    "logging.getLogger('django.db').info('probe-info'); "
    "logging.getLogger('django.server').info("
    "'probe-request-line', extra={'status_code': 200, 'server_time': '03/Dec/2026 16:59:30'})"
)


def printed(**env: str) -> str:
    environment = {
        key: value for key, value in os.environ.items() if key not in {"LOG_LEVEL", "DATABASE_URL"}
    }
    environment |= {"DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "logging-test-key", **env}
    done = subprocess.run(
        [sys.executable, "-c", EMIT],
        cwd=settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout + done.stderr


@pytest.mark.parametrize("debug", ["1", "0"])
def test_a_django_warning_is_printed_once(debug):
    assert printed(DEBUG=debug).count("Bad Request: /probe-4xx") == 1


def test_djangos_info_records_show_in_development_and_in_production_from_log_level():
    assert printed(DEBUG="1").count("probe-info") == 1
    assert "probe-info" not in printed(DEBUG="0")
    assert printed(DEBUG="0", LOG_LEVEL="INFO").count("probe-info") == 1


def test_the_development_servers_request_lines_keep_their_time():
    lines = re.findall(r"^.*probe-request-line$", printed(DEBUG="1"), flags=re.MULTILINE)
    assert lines == ["[03/Dec/2026 16:59:30] probe-request-line"]
