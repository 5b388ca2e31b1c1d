"""What a release must carry. Against the installed package (the wheel, under nox) and, when
WEBMCP_WHEEL / WEBMCP_SDIST name built files, against those archives themselves."""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

import django_webmcp
import pytest

#: Files without which the package does not work (or does not type-check) for its users.
REQUIRED = (
    "django_webmcp/py.typed",
    "django_webmcp/static/webmcp/webmcp.js",
    "django_webmcp/templates/webmcp/head.html",
    "django_webmcp/templatetags/webmcp.py",
    "django_webmcp/management/commands/webmcp_catalog.py",
    "django_webmcp/testing/plugin.py",
)


def test_the_installed_package_has_its_files():
    root = Path(django_webmcp.__file__).parent.parent
    assert [name for name in REQUIRED if not (root / name).is_file()] == []


@pytest.mark.skipif(not os.environ.get("WEBMCP_WHEEL"), reason="no built wheel named (WEBMCP_WHEEL)")
def test_the_wheel_has_its_files_and_metadata():
    with zipfile.ZipFile(os.environ["WEBMCP_WHEEL"]) as wheel:
        names = set(wheel.namelist())
        assert [name for name in REQUIRED if name not in names] == []
        (metadata,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        text = wheel.read(metadata).decode()
    assert "License-Expression: MIT" in text
    assert "Classifier: Framework :: Django :: 5.2" in text and "Classifier: Typing :: Typed" in text
    assert "Provides-Extra: drf" in text and "Provides-Extra: mcp" in text and "Provides-Extra: oauth" in text
    assert not any(name.startswith(("tests/", "example/")) for name in names)


@pytest.mark.skipif(not os.environ.get("WEBMCP_SDIST"), reason="no built sdist named (WEBMCP_SDIST)")
def test_the_sdist_carries_the_tests_docs_and_example():
    with tarfile.open(os.environ["WEBMCP_SDIST"]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for name in (
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        "tests/conftest.py",
        "docs/index.md",
        "example/manage.py",
    ):
        assert name in names, name
