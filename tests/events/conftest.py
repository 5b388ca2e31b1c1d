"""Fixtures for the use-case tests: visitors as the pages, the API and the tools hand them over."""

from __future__ import annotations

import pytest

from core.visitors import Visitor
from events.models import Activity
from events.selectors import state_version

MODES = ["ui", "agent", "api"]


@pytest.fixture
def person(user) -> Visitor:
    """A signed-in visitor."""
    return Visitor(user=user)


@pytest.fixture
def stranger(other_user) -> Visitor:
    """Another signed-in visitor."""
    return Visitor(user=other_user)


@pytest.fixture
def organiser(db) -> Visitor:
    """Someone who may change events (the admin's organisers)."""
    from tests.factories import UserFactory

    return Visitor(user=UserFactory(is_staff=True, is_superuser=True))


@pytest.fixture
def anonymous(db) -> Visitor:
    """An anonymous visitor whose session holds a token (what saving needs)."""
    return Visitor(token="anon-token-0001")


@pytest.fixture
def nobody(db) -> Visitor:
    """A visitor with neither an account nor a session token."""
    return Visitor()


def activity() -> list[tuple[str, str, str]]:
    """Every Activity row as (action, mode, outcome), oldest first."""
    return list(Activity.objects.order_by("id").values_list("action", "mode", "outcome"))


def version(visitor: Visitor) -> int:
    return state_version(visitor=visitor)
