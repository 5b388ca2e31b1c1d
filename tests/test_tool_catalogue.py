"""The site's tool catalogue is the one recorded in tests/tool-catalogue.json: its fingerprint and every
declaration it hashes. A change to a description, a schema or an exposure shows here as a diff to
review (django-webmcp's drift assertion); `WEBMCP_UPDATE_SNAPSHOTS=1` records a meant change."""

from pathlib import Path

import pytest
from django_webmcp.registry import registry
from django_webmcp.testing.catalogue import assert_catalogue_unchanged

pytestmark = pytest.mark.unit

SNAPSHOT = Path(__file__).with_name("tool-catalogue.json")
#: The fingerprint the site served before its WebMCP layer became the django-webmcp package: moving the
#: code changed no tool an agent reads.
FINGERPRINT_BEFORE_THE_PACKAGE = "sha256:c26be0921f903220dfe35a299d283bce0810b51f4fca75eb7b87a1a3bb51a3a1"


def test_the_catalogue_is_the_recorded_one():
    assert_catalogue_unchanged(registry, SNAPSHOT)


def test_the_fingerprint_is_the_one_before_the_package():
    assert registry.fingerprint() == FINGERPRINT_BEFORE_THE_PACKAGE
