"""One name per action: the tool, the use case, the Activity row and the page route share it."""

from __future__ import annotations

import pytest

from events import selectors, services
from events.models import Activity
from tests.factories import EventFactory, RegistrationFactory, UserFactory
from webmcp.registry import registry
from webmcp.routing import url_parameter_sets

pytestmark = pytest.mark.integration

TOOLS = [tool.name for tool in registry.tools()]


def use_case(name: str):
    return getattr(selectors, name, None) or getattr(services, name, None)


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_is_a_use_case_of_the_same_name(name):
    function = use_case(name)
    assert function is not None, f"no use case named {name} in events/selectors.py or events/services.py"
    assert hasattr(function, "__wrapped__"), f"{name} does not record its calls (@records_activity)"


@pytest.mark.parametrize("name", TOOLS)
def test_a_page_route_named_after_the_action_is_the_tools_endpoint(name):
    url_name = name.replace("_", "-")
    if url_parameter_sets(url_name) is None:
        pytest.skip(f"no page route named {url_name}")
    assert registry.get(name).endpoint == url_name


@pytest.mark.django_db
@pytest.mark.parametrize("name", TOOLS)
def test_the_activity_row_carries_the_use_cases_name(name):
    from events.visitors import Visitor

    event = EventFactory(capacity=1 if name == "join_waitlist" else 5)
    if name == "join_waitlist":  # only a full event has a waiting list
        RegistrationFactory(event=event)
    visitor = Visitor(user=UserFactory(), token="t" * 32)
    kwargs = {"visitor": visitor, "mode": "agent"}
    if name != "search_events":
        kwargs["event_id"] = event.public_id
    if name == "cancel_registration":
        services.register_event(visitor=visitor, mode="agent", event_id=event.public_id)
    before = Activity.objects.count()
    use_case(name)(**kwargs)
    row = Activity.objects.order_by("-id").first()
    assert Activity.objects.count() == before + 1 and row.action == name
