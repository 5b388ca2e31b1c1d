"""Settings of the bench servers: the project's settings, plus the bench URLconf and a static root of
their own (collected into the bench's temporary directory, never into the project's `staticfiles/`)."""

import os
from pathlib import Path

from config.settings import *  # noqa: F403  (the bench measures the project's own configuration)

ROOT_URLCONF = "bench.urls"

if os.environ.get("BENCH_STATIC_ROOT"):
    STATIC_ROOT = Path(os.environ["BENCH_STATIC_ROOT"])

# The A/B of the session engine (bench/README.md, "The session engine"): the same run with Django's own
# database engine, whose signed-in request reads the session and then its person.
if os.environ.get("BENCH_SESSION_ENGINE"):
    SESSION_ENGINE = os.environ["BENCH_SESSION_ENGINE"]
