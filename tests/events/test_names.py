"""One name per action: the tool, the action row, the use case, the Activity row and the page route
share it."""

from __future__ import annotations

import pytest
from django_webmcp.registry import registry
from django_webmcp.routing import url_parameter_sets

from core.visitors import Visitor
from events import actions
from events.actions import ACTIONS
from events.choices import StaffRole
from events.models import Activity, EventStaff, Registration
from tests.factories import EventFactory, RegistrationFactory, UserFactory, paid_event

pytestmark = pytest.mark.integration

TOOLS = [tool.name for tool in registry.tools()]


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_is_an_action_row_of_the_same_name(name):
    assert name in ACTIONS, f"no action row named {name} in events/actions.py"
    assert ACTIONS[name].use_case.__name__ == name


@pytest.mark.parametrize("name", TOOLS)
def test_a_tools_input_is_its_action_rows(name):
    """The tool takes the row's input, or a narrower one of the same names (check_in_attendee: the
    row also takes a scanner's ticket code, which no tool may carry)."""
    tool, row = registry.get(name).input_serializer, ACTIONS[name].input
    assert tool is row or set(tool._declared_fields) <= set(row._declared_fields)


@pytest.mark.parametrize("name", TOOLS)
def test_a_page_route_named_after_the_action_is_the_tools_endpoint(name):
    url_name = name.replace("_", "-")
    if url_parameter_sets(url_name) is None:
        pytest.skip(f"no page route named {url_name}")
    assert registry.get(name).endpoint == url_name


def _awaiting(event):
    """A registration of `event` (a paid one) waiting for its transfer."""
    person = UserFactory()
    actions.call("register_event", visitor=Visitor(user=person), channel="api", event_id=event.public_id)
    return Registration.objects.get(user=person, event=event)


def test_two_rows_of_one_name_are_refused_at_import():
    row = ACTIONS["save_event"]
    with pytest.raises(ValueError, match="Two actions"):
        actions._rows(row, row)
    with pytest.raises(ValueError, match="one name per action"):
        actions._rows(actions.Action("keep_event", row.use_case, row.input, row.output, row.scope))


@pytest.mark.django_db
@pytest.mark.parametrize("name", TOOLS)
def test_the_activity_row_carries_the_actions_name(name):
    event = EventFactory(capacity=1 if name == "join_waitlist" else 5)
    if name == "confirm_payment":
        event = paid_event(capacity=5)
    if name == "join_waitlist":  # only a full event has a waiting list
        RegistrationFactory(event=event)
    visitor = Visitor(user=UserFactory(), token="t" * 32)
    data = {} if name == "search_events" else {"event_id": event.public_id}
    if name == "cancel_registration":
        actions.call("register_event", visitor=visitor, channel="agent", event_id=event.public_id)
    if name in ("find_attendee", "check_in_attendee", "confirm_payment"):  # the door, the managers
        role = StaffRole.MANAGER if name == "confirm_payment" else StaffRole.DOOR
        EventStaff.objects.create(event=event, user=visitor.user, role=role)
        attendee = RegistrationFactory(event=event)
        if name == "confirm_payment":  # a registration waiting for its transfer
            attendee = _awaiting(event)
        if name in ("check_in_attendee", "confirm_payment"):
            data["attendee_id"] = attendee.pk
    before = Activity.objects.count()
    actions.call(name, visitor=visitor, channel="agent", **data)
    row = Activity.objects.order_by("-id").first()
    assert Activity.objects.count() == before + 1 and row.action == name
