"""The two commands on a messy machine: a `uv` on PATH that cannot run (a pyenv shim for a uv installed
in another Python: found by `command -v`, failing with 127) is passed over for the project's own."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = [pytest.mark.unit, pytest.mark.slow]  # each test starts a process or a server


def make(*args: str, path_first: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{path_first}:{os.environ['PATH']}"}
    # Neither the calling make's flags nor its command-line variables (PYTEST_ARGS, XDIST) come along.
    for name in ("MAKEFLAGS", "MAKELEVEL", "PYTEST_ARGS", "XDIST"):
        env.pop(name, None)
    return subprocess.run(
        ["make", "-s", *args], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )


def fake_uv(directory: Path, script: str) -> Path:
    directory.mkdir()
    uv = directory / "uv"
    uv.write_text("#!/bin/sh\n" + script)
    uv.chmod(0o755)
    return uv


def test_a_broken_uv_on_path_is_passed_over(tmp_path: Path):
    broken = fake_uv(tmp_path / "shims", 'echo "pyenv: uv: command not found" >&2\nexit 127\n')
    chosen = make("which-uv", path_first=broken.parent)
    assert chosen.returncode == 0 and chosen.stdout.strip() == ".tools/bin/uv"
    # What `make install` would run if the lockfile had changed: the project's uv, never the shim.
    planned = make("-n", "install", "-W", "uv.lock", path_first=broken.parent)
    assert planned.returncode == 0, planned.stderr
    assert ".tools/bin/uv sync --frozen" in planned.stdout and str(broken) not in planned.stdout


def test_a_working_uv_on_path_is_used(tmp_path: Path):
    working = fake_uv(tmp_path / "bin", 'echo "uv 0.9.0"\n')
    chosen = make("which-uv", path_first=working.parent)
    assert chosen.stdout.strip() == str(working)


def test_test_fast_leaves_out_the_slow_kinds_and_installs_no_browser_or_judges(tmp_path: Path):
    """`make test-fast` selects on the file kinds (tests/kinds.py) and needs neither Chromium nor npm;
    `make test` installs both and runs the whole suite: the serial part alone, the rest on two workers."""
    fast = make("-n", "test-fast", path_first=tmp_path)
    assert fast.returncode == 0, fast.stderr
    assert '-m "not (browser or judges or fuzz or faults or slow)"' in fast.stdout
    assert "chromium" not in fast.stdout and "npm" not in fast.stdout
    whole = make(
        "-n", "-W", "lighthouse/package.json", "-W", "mcp-judges/package.json", "test", path_first=tmp_path
    )
    assert whole.returncode == 0, whole.stderr
    assert "chromium" in whole.stdout and "ci --prefix lighthouse" in whole.stdout
    assert "ci --prefix mcp-judges" in whole.stdout
    runs = [line.split("-m pytest", 1)[1] for line in whole.stdout.splitlines() if "-m pytest" in line]
    assert [run.split(";")[0].split() for run in runs] == [
        ["--suite-part=serial"],
        ["-n", "2", "--dist", "loadgroup", "--suite-part=parallel"],
    ]


def test_the_targets_python_writes_its_bytecode_where_the_environment_says_not_to():
    """Each process the suite starts reads the project's compiled modules, and each pytest process the
    assertion-rewritten test modules, that an earlier one wrote: the Makefile clears the variable."""
    probe = 'probe: ; @$(PY) -c "import sys; print(sys.dont_write_bytecode)"'
    env_says = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        ["make", "-s", "--eval", probe, "probe"],
        cwd=settings.BASE_DIR,
        env=env_says,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr
