"""register_event / cancel_registration: the agent fills, the person confirms, the tools follow."""

import pytest

from events.choices import RegistrationStatus
from events.models import Registration
from harness.tools import finish_tool_call, start_tool_call, tool_call_pending, wait_for_tools

pytestmark = pytest.mark.browser

OPEN = {"get_event_details", "save_event", "register_event"}
REGISTERED = {"get_event_details", "save_event", "cancel_registration"}


def test_register_waits_for_the_persons_click_then_the_tool_set_switches(
    page, sign_in, make_user, make_event
):
    event = make_event("evt-browser-confirm", capacity=5)
    user = make_user()
    sign_in(user)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, OPEN)

    start_tool_call(page, "register_event", {})
    button = page.locator("#register-form button[type=submit]")
    page.wait_for_function("() => document.activeElement?.closest('#register-form') !== null")
    page.wait_for_timeout(300)
    assert tool_call_pending(page), "a consequential call must wait for the person"
    assert not Registration.objects.filter(user=user).exists()

    button.click()
    result = finish_tool_call(page)
    assert result["ok"] is True and result["registration"]["status"] == "confirmed"
    assert result["alreadyRegistered"] is False
    wait_for_tools(page, REGISTERED)
    assert (
        Registration.objects.filter(user=user, event=event, status=RegistrationStatus.CONFIRMED).count() == 1
    )

    start_tool_call(page, "cancel_registration", {})
    page.wait_for_function("() => document.activeElement?.closest('#cancel-form') !== null")
    assert tool_call_pending(page)
    page.locator("#cancel-form button[type=submit]").click()
    cancelled = finish_tool_call(page)
    assert cancelled["ok"] is True and cancelled["registration"]["status"] == "cancelled"
    wait_for_tools(page, OPEN)
    assert Registration.objects.get(user=user, event=event).status == RegistrationStatus.CANCELLED


def test_register_cancelled_by_the_person_resetting_the_form(page, sign_in, make_user, make_event):
    event = make_event("evt-browser-declined", capacity=5)
    user = make_user()
    sign_in(user)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, OPEN)
    start_tool_call(page, "register_event", {})
    page.wait_for_function("() => document.activeElement?.closest('#register-form') !== null")
    page.evaluate("() => document.querySelector('#register-form').reset()")
    result = finish_tool_call(page)
    assert (result["ok"], result["code"], result["reason"]) == (False, "USER_CANCELLED", "FORM_RESET")
    assert not Registration.objects.filter(user=user).exists()
    wait_for_tools(page, OPEN)  # the tool stays offered: the person may still want it later


def test_register_anonymous_gets_auth_required_with_where_to_sign_in(page, make_event):
    event = make_event("evt-browser-anon", capacity=5)
    page.goto(f"/events/{event.public_id}/")
    wait_for_tools(page, OPEN)
    result = page.webmcp.call_tool("register_event", {})
    assert result["ok"] is False
    assert (result["code"], result["reason"]) == ("AUTH_REQUIRED", "SIGN_IN_REQUIRED")
    assert "/accounts/login/" in result["nextAction"]
    assert not Registration.objects.filter(event=event).exists()


def test_cancel_from_my_page_by_id_after_the_persons_press(page, sign_in, make_user, make_event):
    event = make_event("evt-browser-me-cancel", capacity=5)
    user = make_user()
    Registration.objects.create(user=user, event=event)
    sign_in(user)
    page.goto("/me/")
    wait_for_tools(page, {"cancel_registration"})
    start_tool_call(page, "cancel_registration", {"event_id": event.public_id})
    page.wait_for_selector("form[data-webmcp-pending]")
    page.wait_for_timeout(300)
    assert tool_call_pending(page), "a consequential call must wait for the person, on /me/ too"
    assert Registration.objects.get(user=user, event=event).status == RegistrationStatus.CONFIRMED
    page.locator("form[data-webmcp-pending] button[type=submit]").click()
    result = finish_tool_call(page)
    assert result["ok"] is True and result["registration"]["status"] == "cancelled"
    assert result["uiUpdated"] is True
    assert Registration.objects.get(user=user, event=event).status == RegistrationStatus.CANCELLED
