"""django-webmcp (webmcp/) is this repository's package: the site runs on it through the workspace,
under the repository's licence."""

import tomllib
from pathlib import Path

import django_webmcp
import pytest
from django.conf import settings

pytestmark = pytest.mark.unit

ROOT = Path(settings.BASE_DIR)


def test_the_package_carries_the_repositorys_licence():
    package = tomllib.loads((ROOT / "webmcp" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert package["license"] == site["license"] == "MIT"
    assert (ROOT / "webmcp" / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()


def test_the_site_runs_on_the_workspace_member():
    site = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert site["tool"]["uv"]["sources"]["django-webmcp"] == {"workspace": True}
    assert Path(django_webmcp.__file__).is_relative_to(ROOT / "webmcp" / "src")
