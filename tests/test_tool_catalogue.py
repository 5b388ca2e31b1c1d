"""The site's tool catalogue is the one recorded in tests/tool-catalogue.json: its fingerprint and every
declaration it hashes. A change to a description, a schema or an exposure shows here as a diff to
review (django-webmcp's drift assertion); `WEBMCP_UPDATE_SNAPSHOTS=1` records a meant change, which is
committed with it."""

from pathlib import Path

import pytest
from django_webmcp.registry import registry
from django_webmcp.testing.catalogue import assert_catalogue_unchanged

pytestmark = pytest.mark.unit

SNAPSHOT = Path(__file__).with_name("tool-catalogue.json")


def test_the_catalogue_is_the_recorded_one():
    assert_catalogue_unchanged(registry, SNAPSHOT)
