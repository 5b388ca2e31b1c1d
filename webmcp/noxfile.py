"""django-webmcp's matrix: its suite and the example's, against the built wheel, never the checkout.

Each session is a fresh uv environment with one Django series and either no extras ("bare": no DRF, no
MCP) or all of them ("full"), the package installed from the wheel this file builds once per run
(`uv build`). The suite then runs once per settings project that environment can hold: bare runs
tests.settings.nodrf; full runs drf, mcp (with the browser tests) and login_required, then the example.
WEBMCP_EXPECT_INSTALLED=1 makes the suite stop if it imported the checkout instead of the wheel.

    nox -f webmcp/noxfile.py                       # everything: 5.2, 6.0, 6.1 × bare, full
    nox -f webmcp/noxfile.py -s "tests(django='6.1', variant='full')"
    nox -f webmcp/noxfile.py -t ci                 # what CI runs: 5.2 and 6.1
    nox -f webmcp/noxfile.py -s wheel              # the release check: the wheel in a fresh venv per
                                                   # Django LTS/latest, its contents, the example's tests

Python: WEBMCP_NOX_PYTHON (a version or an interpreter's path; default: the Python running nox).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import nox

HERE = Path(__file__).resolve().parent
#: The Python the sessions use: WEBMCP_NOX_PYTHON (a version uv can find, or an interpreter's path), else
#: the one running nox — always there, since uv here cannot download an interpreter.
PYTHON = os.environ.get("WEBMCP_NOX_PYTHON") or sys.executable
DJANGO = {"5.2": "django>=5.2,<5.3", "6.0": "django>=6.0,<6.1", "6.1": "django>=6.1,<6.2"}
CI_DJANGO = ("5.2", "6.1")
TEST_TOOLS = ("pytest>=8.3", "pytest-django>=4.11")

nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True
nox.options.sessions = ["tests"]


@cache
def built(kind: str = "wheel") -> Path:
    """The package built once per nox run: `uv build --wheel` (or `--sdist`) into a temporary folder;
    or the one in WEBMCP_DIST (the release check tests the very files twine checked)."""
    pattern = "*.whl" if kind == "wheel" else "*.tar.gz"
    given = os.environ.get("WEBMCP_DIST")
    if given:
        (found,) = Path(given).resolve().glob(pattern)
        return found
    out = Path(tempfile.mkdtemp(prefix="django-webmcp-dist-"))
    subprocess.run(["uv", "build", f"--{kind}", "--out-dir", str(out), str(HERE)], check=True)
    (found,) = out.glob(pattern)
    return found


def run_suite(session: nox.Session, settings: str, *extra: str) -> None:
    session.chdir(HERE)
    session.run("pytest", "--ds", f"tests.settings.{settings}", *extra, *session.posargs)


@nox.session(python=PYTHON, tags=["matrix"])
@nox.parametrize("django", [nox.param(v, tags=["ci"] if v in CI_DJANGO else []) for v in DJANGO])
@nox.parametrize("variant", ["bare", "full"])
def tests(session: nox.Session, django: str, variant: str) -> None:
    """The package's suite (and, in full, the example's) on one Django series, from the wheel."""
    wheel = built()
    target = str(wheel) if variant == "bare" else f"{wheel}[drf,mcp,oauth,testing]"
    # drf-spectacular in full: a field's output schema is read from its annotations when it is there
    # (tests/test_schema_sources.py); bare has no DRF at all.
    extra = () if variant == "bare" else ("drf-spectacular>=0.28",)
    session.install(target, DJANGO[django], *TEST_TOOLS, *extra)
    session.env["WEBMCP_EXPECT_INSTALLED"] = "1"
    if os.environ.get("WEBMCP_DIST"):  # the release's own files: tests/test_distribution.py reads them
        session.env["WEBMCP_WHEEL"] = str(wheel)
        session.env["WEBMCP_SDIST"] = str(built("sdist"))
    if variant == "bare":
        run_suite(session, "nodrf")
        return
    run_suite(session, "drf", "-m", "not browser")
    run_suite(session, "mcp")  # browser tests included (skipped without Chromium)
    run_suite(session, "login_required", "-m", "not browser")
    session.chdir(HERE / "example")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON, tags=["release"])
@nox.parametrize("django", list(CI_DJANGO))
def wheel(session: nox.Session, django: str) -> None:
    """The release check: the wheel installs into a fresh environment with Django 5.2 and with 6.1,
    ships its static JS, templates and py.typed, and the example's tests pass against it."""
    wheel_file = built()
    session.install(f"{wheel_file}[mcp,testing]", DJANGO[django], *TEST_TOOLS)
    session.env["WEBMCP_EXPECT_INSTALLED"] = "1"
    session.env["WEBMCP_WHEEL"] = str(wheel_file)
    session.env["WEBMCP_SDIST"] = str(built("sdist"))
    session.chdir(HERE)
    session.run("pytest", "--ds", "tests.settings.nodrf", "tests/test_distribution.py")
    session.chdir(HERE / "example")
    session.run("pytest", "-m", "not browser", *session.posargs)
