"""`manage.py add_event_staff`: an event's team from the command line, and a manager's admin access."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from events.choices import MANAGER_PERMISSIONS, MANAGERS_GROUP, StaffRole
from events.models import EventStaff
from tests.factories import EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def run(*args: str) -> str:
    out = StringIO()
    call_command("add_event_staff", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def event():
    return EventFactory(public_id="evt-team", title="Team night")


@pytest.fixture
def mei():
    return UserFactory(username="mei")


def in_group(user) -> bool:
    return user.groups.filter(name=MANAGERS_GROUP).exists()


def test_a_manager_is_added_with_admin_access_and_the_group_is_made_with_its_permissions(event, mei):
    assert not Group.objects.filter(name=MANAGERS_GROUP).exists()
    out = run("evt-team", "mei", "--role", "manager")
    assert "mei is added to the team of evt-team as manager" in out
    assert EventStaff.objects.get(event=event, user=mei).role == StaffRole.MANAGER
    mei.refresh_from_db()
    assert mei.is_staff and not mei.is_superuser and in_group(mei)
    group = Group.objects.get(name=MANAGERS_GROUP)
    assert sorted(group.permissions.values_list("codename", flat=True)) == sorted(MANAGER_PERMISSIONS)
    assert mei.has_perm("events.change_event") and not mei.has_perm("events.add_event")
    assert not mei.has_perm("events.change_eventstaff")  # the team is the superusers' to change


def test_the_manager_can_then_open_the_admin_and_sees_their_event_only(event, mei):
    EventFactory(public_id="evt-not-theirs")
    run("evt-team", "mei", "--role", "manager")
    client = Client(headers={"accept-language": "en"})
    client.force_login(mei)
    response = client.get(reverse("admin:events_event_changelist"))
    assert response.status_code == 200
    assert [row.public_id for row in response.context["cl"].result_list] == ["evt-team"]


def test_door_staff_get_no_admin_access(event, mei):
    out = run("evt-team", "mei", "--role", "door")
    assert "as door" in out
    assert EventStaff.objects.get(event=event, user=mei).role == StaffRole.DOOR
    mei.refresh_from_db()
    assert not mei.is_staff and not in_group(mei)


def test_a_role_is_changed_in_place_and_a_former_manager_leaves_the_group(event, mei):
    run("evt-team", "mei", "--role", "manager")
    out = run("evt-team", "mei", "--role", "door")
    assert "is on the team of evt-team as door now" in out
    assert list(EventStaff.objects.values_list("user__username", "role")) == [("mei", "door")]
    mei.refresh_from_db()
    assert not in_group(mei)


def test_removing_takes_the_person_off_one_team_and_keeps_what_they_manage_elsewhere(event, mei):
    EventFactory(public_id="evt-other-team")
    run("evt-team", "mei", "--role", "manager")
    run("evt-other-team", "mei", "--role", "manager")
    out = run("evt-team", "mei", "--remove")
    assert "no longer on the team of evt-team" in out and "manages no event" not in out
    assert list(EventStaff.objects.values_list("event__public_id", flat=True)) == ["evt-other-team"]
    assert in_group(mei)
    out = run("evt-other-team", "mei", "--remove")
    assert "manages no event now" in out
    assert not EventStaff.objects.exists() and not in_group(mei)
    assert "was not on the team of evt-team; nothing changed" in run("evt-team", "mei", "--remove")


def test_a_group_made_by_hand_gets_the_permissions_it_lacks(event, mei):
    Group.objects.create(name=MANAGERS_GROUP)
    run("evt-team", "mei", "--role", "manager")
    group = Group.objects.get(name=MANAGERS_GROUP)
    assert set(group.permissions.values_list("codename", flat=True)) == set(MANAGER_PERMISSIONS)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["evt-nowhere", "mei", "--role", "door"], "No event has the id 'evt-nowhere'"),
        (["evt-team", "nobody", "--role", "door"], "No person has the username 'nobody'"),
        (["evt-team", "mei", "--role", "owner"], "Unknown role 'owner'"),
        (["evt-team", "mei"], "No role given"),
        (["evt-team", "mei", "--role", "door", "--remove"], "either --role or --remove"),
    ],
)
def test_unknown_events_people_and_roles_are_clear_errors(event, mei, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not EventStaff.objects.exists()
    mei.refresh_from_db()
    assert not mei.is_staff


def test_each_change_is_a_row_of_its_action_by_the_declared_system_actor(event, mei):
    from events.models import Activity

    run("evt-team", "mei", "--role", "manager")
    run("evt-team", "mei", "--role", "manager")  # the same role again: changes nothing
    run("evt-team", "mei", "--remove")
    rows = Activity.objects.order_by("id").values_list("action", "mode", "outcome", "user", "client", "event")
    assert list(rows) == [
        ("add_event_staff", "admin", "OK", None, "manage.py add_event_staff", event.pk),
        ("add_event_staff", "admin", "ALREADY_ON_TEAM", None, "manage.py add_event_staff", event.pk),
        ("remove_event_staff", "admin", "OK", None, "manage.py add_event_staff", event.pk),
    ]
