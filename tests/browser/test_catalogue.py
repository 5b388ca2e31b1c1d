"""Catalogue per route and state: what Chromium lists equals the manifest and `webmcp_catalog`."""

import io
import json

import pytest
from django.core.management import call_command
from django_webmcp.registry import Binding, registry

from core.visitors import Visitor
from events import actions
from events.choices import RegistrationStatus
from harness.tools import manifest, wait_for_tools
from tests.factories import EventFactory, RegistrationFactory

pytestmark = pytest.mark.browser

BROWSER_ANNOTATIONS = {
    "readOnlyHint": "readOnly",
    "untrustedContentHint": "untrustedContent",
    "consequentialHint": "consequential",
}


def catalogue_for(path: str) -> dict[str, dict]:
    out = io.StringIO()
    call_command("webmcp_catalog", "--route", path, stdout=out)
    return {tool["name"]: tool for tool in json.loads(out.getvalue())["tools"]}


def assert_listed_tools_match(page, path: str, expected: set[str], *, confirmed: set[str] = frozenset()):
    """Field by field: what Chromium lists = the registry's declaration = the manifest = the catalogue.

    `confirmed` are the tools whose calls on this page wait for the person's press.
    """
    listed = {tool["name"]: tool for tool in wait_for_tools(page, expected)}
    rendered = {tool["name"]: tool for tool in manifest(page)["tools"]}
    assert set(rendered) == expected, "the manifest and the browser disagree"
    catalogue = catalogue_for(path)
    for name, tool in listed.items():
        declared = registry.get(name)
        schema = declared.schema_for(Binding(rendered[name]["binding"]))
        assert tool["description"] == str(declared.description) == catalogue[name]["description"]
        assert (
            tool["inputSchema"] == schema == rendered[name]["inputSchema"] == catalogue[name]["inputSchema"]
        )
        shown = {key for key, value in tool.get("annotations", {}).items() if value}
        assert shown == {BROWSER_ANNOTATIONS[key] for key in declared.annotations}, name
        assert declared.annotations == catalogue[name].get("annotations", {})
        assert rendered[name].get("confirm", False) == (name in confirmed), name
    # The page marks a form for the person to press exactly for the confirmed tools.
    marked = set(
        page.locator("form[data-webmcp-confirm]").evaluate_all("f => f.map(x => x.dataset.webmcpConfirm)")
    )
    assert marked == set(confirmed)


@pytest.fixture
def open_event(make_event):
    return make_event("evt-browser-open", capacity=10)


def test_catalogue_on_the_list_page(page):
    page.goto("/events/")
    assert_listed_tools_match(page, "/events/", {"search_events", "get_event_details", "save_event"})


def test_catalogue_on_a_detail_page_for_an_anonymous_visitor(page, open_event):
    path = f"/events/{open_event.public_id}/"
    page.goto(path)
    # register_event answers AUTH_REQUIRED at once: nothing to confirm.
    assert_listed_tools_match(page, path, {"get_event_details", "save_event", "register_event"})


def test_catalogue_on_a_detail_page_signed_in_confirms_register(page, sign_in, make_user, open_event):
    sign_in(make_user())
    path = f"/events/{open_event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(
        page, path, {"get_event_details", "save_event", "register_event"}, confirmed={"register_event"}
    )


def test_catalogue_when_registered_offers_cancel_instead_of_register(page, sign_in, make_user, open_event):
    user = make_user()
    RegistrationFactory(user=user, event=open_event)
    sign_in(user)
    path = f"/events/{open_event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(
        page,
        path,
        {"get_event_details", "save_event", "cancel_registration"},
        confirmed={"cancel_registration"},
    )


def test_catalogue_on_a_full_event_offers_the_waiting_list_not_register(page, sign_in, make_user, make_event):
    event = make_event("evt-browser-full", capacity=1)
    RegistrationFactory(event=event)
    sign_in(make_user())
    path = f"/events/{event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details", "save_event", "join_waitlist"})


def test_catalogue_on_the_waiting_list_and_with_a_held_seat(page, sign_in, make_user, make_event):
    event = make_event("evt-browser-held", capacity=1)
    holder = RegistrationFactory(event=event).user
    user = make_user()
    actions.call("join_waitlist", visitor=Visitor(user=user), channel="ui", event_id=event.public_id)
    sign_in(user)
    path = f"/events/{event.public_id}/"
    page.goto(path)
    assert_listed_tools_match(page, path, {"get_event_details", "save_event", "leave_waitlist"})
    actions.call("cancel_registration", visitor=Visitor(user=holder), channel="ui", event_id=event.public_id)
    page.goto(path)
    assert_listed_tools_match(
        page,
        path,
        {"get_event_details", "save_event", "register_event", "leave_waitlist"},
        confirmed={"register_event"},
    )


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
    assert_listed_tools_match(page, "/me/", {"cancel_registration"}, confirmed={"cancel_registration"})
    cancel = page.webmcp.tools()[0]
    assert cancel["inputSchema"]["required"] == ["event_id"]


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/signup/", "/me/"])
def test_no_tools_on_sign_in_pages_or_for_anonymous_my_page(page, path):
    page.goto(path)
    page.wait_for_timeout(100)
    assert page.webmcp.tools() == []
    assert manifest(page)["tools"] == []


def test_no_cancel_tool_on_my_page_without_a_cancel_button(page, sign_in, make_user, make_event):
    """Only a registration that can still be cancelled has a button to press, so only then the tool."""
    user = make_user()
    RegistrationFactory(user=user, event=make_event("evt-browser-me-past", past=True))
    sign_in(user)
    page.goto("/me/")
    page.wait_for_timeout(100)
    assert page.webmcp.tools() == [] and manifest(page)["tools"] == []
