"""The waiting list through the tools in Chromium: join a full event, see the place, get the offer when
a seat frees, claim it with register_event (the person confirms), or decline it with leave_waitlist."""

import pytest

from core.visitors import Visitor
from events import actions
from events.choices import RegistrationStatus, WaitlistStatus
from events.models import Registration, WaitlistEntry
from harness.tools import finish_tool_call, start_tool_call, wait_for_tools

pytestmark = pytest.mark.browser

FULL = {"get_event_details", "save_event", "join_waitlist"}
WAITING = {"get_event_details", "save_event", "leave_waitlist"}
OFFERED = {"get_event_details", "save_event", "register_event", "leave_waitlist"}


def full_event(make_event, make_user, public_id: str):
    event = make_event(public_id, capacity=1)
    holder = make_user("holder")
    Registration.objects.create(user=holder, event=event)
    return event, holder


def test_join_then_the_offer_then_claim_it_with_the_persons_press(page, sign_in, make_user, make_event):
    event, holder = full_event(make_event, make_user, "evt-browser-waitlist")
    user = make_user()
    sign_in(user)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, FULL)

    joined = page.webmcp.call_tool("join_waitlist", {})
    assert (joined["ok"], joined["position"], joined["offer"], joined["uiUpdated"]) == (True, 1, None, True)
    assert page.locator("#waitlist-status").inner_text().strip() != ""
    wait_for_tools(page, WAITING)
    assert WaitlistEntry.objects.get(user=user).status == WaitlistStatus.WAITING

    # The holder cancels elsewhere: the seat is held for this person, and their page says so on reload.
    actions.call("cancel_registration", visitor=Visitor(user=holder), channel="ui", event_id=event.public_id)
    page.reload()
    wait_for_tools(page, OFFERED)
    details = page.webmcp.call_tool("get_event_details", {})
    assert details["waitlist"]["position"] == 1 and details["waitlist"]["offer"]["expiresAt"]

    start_tool_call(page, "register_event", {})
    page.wait_for_selector("#register-form[data-webmcp-pending]")
    assert not Registration.objects.filter(user=user).exists()
    page.locator("#register-form button[type=submit]").click()
    result = finish_tool_call(page)
    assert result["ok"] is True and result["registration"]["status"] == "confirmed"
    wait_for_tools(page, {"get_event_details", "save_event", "cancel_registration"})
    assert Registration.objects.get(user=user, event=event).status == RegistrationStatus.CONFIRMED
    assert WaitlistEntry.objects.get(user=user).status == WaitlistStatus.CLAIMED


def test_decline_passes_the_seat_on_and_the_page_follows(page, sign_in, make_user, make_event):
    event, holder = full_event(make_event, make_user, "evt-browser-decline")
    user, next_person = make_user(), make_user("next")
    actions.call("join_waitlist", visitor=Visitor(user=user), channel="ui", event_id=event.public_id)
    actions.call("join_waitlist", visitor=Visitor(user=next_person), channel="ui", event_id=event.public_id)
    actions.call("cancel_registration", visitor=Visitor(user=holder), channel="ui", event_id=event.public_id)
    sign_in(user)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, OFFERED)
    result = page.webmcp.call_tool("leave_waitlist", {})
    assert (result["ok"], result["declinedOffer"], result["uiUpdated"]) == (True, True, True)
    wait_for_tools(page, FULL)  # the seat is held for the next person: full again, and they may rejoin
    assert WaitlistEntry.objects.get(user=next_person).status == WaitlistStatus.OFFERED


def test_anonymous_join_is_told_to_sign_in(page, make_user, make_event):
    event, _ = full_event(make_event, make_user, "evt-browser-waitlist-anon")
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, FULL)
    result = page.webmcp.call_tool("join_waitlist", {})
    assert (result["ok"], result["code"], result["reason"]) == (False, "AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert not WaitlistEntry.objects.filter(event=event).exists()
