"""The browser package seeds its database and flushes it at the end (conftest.py, `server`): the guard
before that must let a test database through and stop any other.

The django_db marker also has pytest-django create the test database when this package runs alone (it
makes one only for a selection with such a test); the other browser tests go without the marker,
because its transaction would hold SQLite's write lock against the live server. It is marked serial so
that make test's serial part, whose browser tests (Lighthouse) carry no marker, gets its test database
too; the parallel part has django_db tests all over.
"""

from __future__ import annotations

import pytest
from django.db import connections

from tests.browser.conftest import _refuse_unless_test_database

pytestmark = [pytest.mark.browser, pytest.mark.serial]


@pytest.mark.django_db
def test_the_guard_lets_the_test_database_through_and_stops_any_other():
    _refuse_unless_test_database()

    default = connections["default"].settings_dict
    name, test = default["NAME"], dict(default.get("TEST") or {})
    default["NAME"], default["TEST"] = "events", {"NAME": "test_events"}
    try:
        with pytest.raises(pytest.fail.Exception, match="not a test database"):
            _refuse_unless_test_database()
    finally:
        default["NAME"], default["TEST"] = name, test
