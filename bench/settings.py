"""Settings of the bench servers: the project's settings, plus the bench URLconf and a static root of
their own (collected into the bench's temporary directory, never into the project's `staticfiles/`)."""

import os
from pathlib import Path

from config.settings import *  # noqa: F403  (the bench measures the project's own configuration)

ROOT_URLCONF = "bench.urls"

if os.environ.get("BENCH_STATIC_ROOT"):
    STATIC_ROOT = Path(os.environ["BENCH_STATIC_ROOT"])
