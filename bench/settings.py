"""Settings of the bench servers: the project's settings, plus the bench URLconf and a static root of
their own (collected into the bench's temporary directory, never into the project's `staticfiles/`)."""

import os
from pathlib import Path

from config.settings import *  # noqa: F403  (the bench measures the project's own configuration)

ROOT_URLCONF = "bench.urls"

if os.environ.get("BENCH_STATIC_ROOT"):
    STATIC_ROOT = Path(os.environ["BENCH_STATIC_ROOT"])

# Another session engine for a run (bench/README.md, "Stock pieces"), e.g. Django's plain database
# engine beside the cached one the site runs.
if os.environ.get("BENCH_SESSION_ENGINE"):
    SESSION_ENGINE = os.environ["BENCH_SESSION_ENGINE"]
