"""Catalogue per route and state: what Chromium lists equals the manifest and `webmcp_catalog`."""

import io
import json

import pytest
from django.core.management import call_command

from events.choices import RegistrationStatus
from tests.browser.conftest import manifest, wait_for_tools
from tests.factories import EventFactory, RegistrationFactory

BROWSER_ANNOTATIONS = {
    "readOnlyHint": "readOnly",
    "untrustedContentHint": "untrustedContent",
    "consequentialHint": "consequential",
}


def catalogue_for(path: str) -> dict[str, dict]:
    out = io.StringIO()
    call_command("webmcp_catalog", "--route", path, stdout=out)
    return {tool["name"]: tool for tool in json.loads(out.getvalue())["tools"]}


def assert_listed_tools_match(page, path: str, expected: set[str]) -> None:
    listed = {tool["name"]: tool for tool in wait_for_tools(page, expected)}
    rendered = {tool["name"]: tool for tool in manifest(page)["tools"]}
    assert set(rendered) == expected, "the manifest and the browser disagree"
    catalogue = catalogue_for(path)
    for name, tool in listed.items():
        assert tool["description"] == rendered[name]["description"] == catalogue[name]["description"]
        assert tool["inputSchema"] == rendered[name]["inputSchema"] == catalogue[name]["inputSchema"] or (
            rendered[name]["binding"]
            == "form"  # a form's schema is derived by the browser: see test_search_events
        )
        shown = {k for k, v in tool.get("annotations", {}).items() if v}
        if rendered[name]["binding"] == "form":
            # A declarative form has no attribute for annotations (declarative-api-explainer): the
            # browser shows none; the manifest and the catalogue still carry ours.
            assert shown == set()
            assert rendered[name].get("annotations", {}) == catalogue[name].get("annotations", {})
        else:
            assert shown == {BROWSER_ANNOTATIONS[k] for k in catalogue[name].get("annotations", {})}


@pytest.fixture
def open_event(make_event):
    return make_event("evt-browser-open", capacity=10)


def test_catalogue_on_the_list_page(page):
    page.goto("/events/")
    assert_listed_tools_match(page, "/events/", {"search_events", "get_event_details", "save_event"})


def test_catalogue_on_a_detail_page_for_an_anonymous_visitor(page, open_event):
    path = f"/events/{open_event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details", "save_event", "register_event"})
    register = next(tool for tool in manifest(page)["tools"] if tool["name"] == "register_event")
    assert register["binding"] == "route"  # answers AUTH_REQUIRED at once: no form to confirm
    assert page.locator("form[toolname]").count() == 0


def test_catalogue_on_a_detail_page_signed_in_offers_the_register_form(page, sign_in, make_user, open_event):
    sign_in(make_user())
    path = f"/events/{open_event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details", "save_event", "register_event"})
    form = page.locator("form[toolname=register_event]")
    assert form.count() == 1 and form.get_attribute("toolautosubmit") is None


def test_catalogue_when_registered_offers_cancel_instead_of_register(page, sign_in, make_user, open_event):
    user = make_user()
    RegistrationFactory(user=user, event=open_event)
    sign_in(user)
    path = f"/events/{open_event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details", "save_event", "cancel_registration"})


def test_catalogue_on_a_full_event_offers_no_register(page, sign_in, make_user, make_event):
    event = make_event("evt-browser-full", capacity=1)
    RegistrationFactory(event=event)
    sign_in(make_user())
    path = f"/events/{event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details", "save_event"})


def test_catalogue_on_a_cancelled_event_offers_only_details(page, sign_in, make_user, make_event):
    event = make_event("evt-browser-cancelled", cancelled=True)
    sign_in(make_user())
    path = f"/events/{event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details"})


def test_catalogue_on_a_past_event_offers_no_register(page, sign_in, make_user, make_event):
    event = make_event("evt-browser-past", past=True)
    sign_in(make_user())
    path = f"/events/{event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details", "save_event"})


def test_catalogue_on_my_page_offers_cancel_by_id_when_signed_in(page, sign_in, make_user, open_event):
    user = make_user()
    RegistrationFactory(user=user, event=open_event)
    RegistrationFactory(user=user, event=EventFactory(), status=RegistrationStatus.CANCELLED)
    sign_in(user)
    page.goto("/me/")
    assert_listed_tools_match(page, "/me/", {"cancel_registration"})
    cancel = page.webmcp.tools()[0]
    assert cancel["inputSchema"]["required"] == ["event_id"]


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/signup/", "/me/"])
def test_no_tools_on_sign_in_pages_or_for_anonymous_my_page(page, path):
    page.goto(path)
    page.wait_for_timeout(100)
    assert page.webmcp.tools() == []
    assert manifest(page)["tools"] == []
