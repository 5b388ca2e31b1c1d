"""Mode: an agent's call is recorded as `agent`, the same action clicked by a person as `ui`."""

import pytest

from events.models import Activity
from harness.tools import wait_for_tools

pytestmark = pytest.mark.browser


def test_agent_and_person_are_recorded_by_mode_with_the_same_outcome(page, sign_in, make_user, make_event):
    agent_event = make_event("evt-browser-mode-agent")
    person_event = make_event("evt-browser-mode-person")
    user = make_user()
    sign_in(user)

    page.goto(f"/events/{agent_event.public_id}/")
    wait_for_tools(page, {"get_event_details", "save_event", "register_event"})
    assert page.webmcp.call_tool("save_event", {})["ok"] is True

    page.goto(f"/events/{person_event.public_id}/")
    page.locator("#save-toggle").click()
    page.wait_for_function(
        "() => document.querySelector('#save-toggle').getAttribute('aria-pressed') === 'true'"
    )

    saves = Activity.objects.filter(action="save_event", user=user).order_by("id")
    assert [(a.event.public_id, a.mode, a.outcome) for a in saves] == [
        (agent_event.public_id, "agent", "OK"),
        (person_event.public_id, "ui", "OK"),
    ]
