"""Faults on the tool path: a write whose answer is lost is reported as UNKNOWN_OUTCOME and never
retried by the runtime; the agent is told to check before retrying."""

import pytest

from events.models import Activity, SavedEvent
from harness.tools import wait_for_tools

pytestmark = pytest.mark.faults


def test_a_write_whose_response_is_lost_is_unknown_outcome_and_not_retried(
    page, sign_in, make_user, make_event
):
    event = make_event("evt-browser-lost")
    user = make_user()
    sign_in(user)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, {"get_event_details", "save_event", "register_event"})
    reached = []

    def deliver_then_drop(route):
        route.fetch()  # the server handles the write ...
        reached.append(route.request.method)
        route.abort()  # ... and its answer never arrives

    page.route(f"**/events/{event.public_id}/save/", deliver_then_drop)
    result = page.webmcp.call_tool("save_event", {})
    assert result["ok"] is False
    assert (result["code"], result["reason"]) == ("UNKNOWN_OUTCOME", "RESPONSE_LOST")
    assert result["retryable"] is False and result["uiUpdated"] is False
    assert "before retrying" in result["nextAction"]
    assert reached == ["POST"]  # sent once, never retried
    assert SavedEvent.objects.filter(user=user, event=event).count() == 1
    assert Activity.objects.filter(action="save_event", user=user).count() == 1

    page.unroute(f"**/events/{event.public_id}/save/")
    check = page.webmcp.call_tool("get_event_details", {})
    assert check["saved"] is True  # what the agent is told to do: read the state again
