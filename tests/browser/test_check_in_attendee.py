"""The check-in page at the door, on a phone: a typed (or USB-scanned) code, the answers, undo, the live
counts, zh-Hant; the page's WebMCP tools (find_attendee, then check_in_attendee after the staff
member's press); and the camera, fed a QR code of a real ticket through Chromium's fake camera."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from django.utils import timezone

from core.visitors import Visitor
from events import actions
from events.choices import StaffRole
from events.models import CheckIn, EventStaff, Registration
from harness.chromium import CHROMIUM, CHROMIUM_ARGS
from harness.tools import PENDING_BUTTON, finish_tool_call, start_tool_call, tool_call_pending, wait_for_tools

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DOOR_TOOLS = {"find_attendee", "check_in_attendee"}


@pytest.fixture
def door(make_event, make_user):
    """An event with door staff (Mei) and two confirmed attendees, Ada (with her ticket) and Grace."""
    event = make_event("evt-door", capacity=10, title="Door rehearsal")
    staff = make_user("door")
    staff.first_name = "Mei"
    staff.save()
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    people = {}
    for first, last in (("Ada", "Lovelace"), ("Grace", "Hopper")):
        person = make_user(first.lower())
        person.first_name, person.last_name = first, last
        person.email = f"{first.lower()}-{uuid.uuid4().hex[:6]}@example.org"
        person.save()
        actions.call("register_event", visitor=Visitor(user=person), channel="ui", event_id=event.public_id)
        people[first] = Registration.objects.get(user=person, event=event)
    return event, staff, people


@pytest.fixture
def phone(browser, server):
    def open_context(locale: str = "en-US"):
        return browser.new_context(base_url=server, viewport=PHONE, locale=locale)

    contexts = []

    def make(locale: str = "en-US"):
        context = open_context(locale)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        return context, page

    yield make
    for context in contexts:
        context.close()


def signed_in(context, server, user) -> None:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": server}])


def scan(page, code: str) -> None:
    """What a USB scanner does: type the code into the focused field, then Enter."""
    page.locator("#ticket-code").focus()
    page.keyboard.type(code)
    page.keyboard.press("Enter")


def hh_mm(registration: Registration) -> str:
    check_in = CheckIn.objects.get(registration=registration, undone_at=None)
    return timezone.localtime(check_in.checked_in_at).strftime("%H:%M")


def counts(page) -> str:
    return " ".join(page.locator("#door-counts").inner_text().split())


def test_a_typed_code_admits_then_says_when_and_by_whom_and_counts_follow(
    phone, server, door, tmp_path: Path
):
    event, staff, people = door
    ada = people["Ada"]
    context, page = phone()
    signed_in(context, server, staff)
    page.goto(f"/events/{event.public_id}/check-in/")
    assert counts(page) == "0 of 2 checked in"
    assert page.evaluate("() => document.activeElement?.id") == "ticket-code"  # ready for the scanner

    scan(page, ada.ticket_code.lower())  # typed by hand: case does not matter
    answer = page.locator("#door-answer.door-answer-admitted")
    answer.wait_for()
    assert "Admitted" in answer.inner_text() and "Ada Lovelace" in answer.inner_text()
    page.wait_for_function("() => document.querySelector('#door-counts').textContent.includes('1 of 2')")
    # Ready for the next one: the field emptied and focused, the code nowhere on the page.
    assert page.locator("#ticket-code").input_value() == ""
    assert page.evaluate("() => document.activeElement?.id") == "ticket-code"
    assert ada.ticket_code not in page.content()
    page.screenshot(path=str(tmp_path / "door-admitted-390.png"), full_page=True)

    scan(page, ada.ticket_code)
    already = page.locator("#door-answer.door-answer-already")
    already.wait_for()
    text = " ".join(already.inner_text().split())
    assert f"Already checked in at {hh_mm(ada)} by Mei" in text and "Ada Lovelace" in text
    assert counts(page) == "1 of 2 checked in"
    assert CheckIn.objects.filter(registration=ada).count() == 1
    page.screenshot(path=str(tmp_path / "door-already-390.png"), full_page=True)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways at 390 px ({width} px)"


def test_codes_that_admit_nobody_say_why_in_red(phone, server, door, make_event, make_user, tmp_path: Path):
    event, staff, people = door
    elsewhere = make_event("evt-door-other", capacity=5)
    visitor = Visitor(user=make_user("elsewhere"))
    actions.call("register_event", visitor=visitor, channel="ui", event_id=elsewhere.public_id)
    other_ticket = Registration.objects.get(user=visitor.user).ticket_code
    grace = people["Grace"]
    cancelled_ticket = grace.ticket_code
    actions.call(
        "cancel_registration", visitor=Visitor(user=grace.user), channel="ui", event_id=event.public_id
    )
    context, page = phone()
    signed_in(context, server, staff)
    page.goto(f"/events/{event.public_id}/check-in/")

    for code, words in (
        (other_ticket, "Not a ticket for this event."),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "Unknown ticket: this code is not one of ours."),
        (cancelled_ticket, "Cancelled: this ticket no longer admits anyone."),
    ):
        before = page.locator("#door-answer").element_handle()
        scan(page, code)
        page.wait_for_function("(old) => document.querySelector('#door-answer') !== old", arg=before)
        answer = page.locator("#door-answer.door-answer-refused")
        assert answer.get_attribute("role") == "alert"
        assert "Do not admit" in answer.inner_text() and words in answer.inner_text(), code
        assert code not in page.content()
    page.screenshot(path=str(tmp_path / "door-refused-390.png"), full_page=True)
    assert not CheckIn.objects.filter(registration__event=event).exists()


def test_undo_takes_the_check_in_back_and_the_count_with_it(phone, server, door):
    event, staff, people = door
    ada = people["Ada"]
    context, page = phone()
    signed_in(context, server, staff)
    page.goto(f"/events/{event.public_id}/check-in/")
    scan(page, ada.ticket_code)
    page.locator("#door-answer.door-answer-admitted").wait_for()
    page.wait_for_function("() => document.querySelector('#door-counts').textContent.includes('1 of 2')")

    page.get_by_role("button", name="Undo this check-in").click()
    undone = page.locator("#door-answer.door-answer-undone")
    undone.wait_for()
    assert "Check-in undone." in undone.inner_text() and "Ada Lovelace" in undone.inner_text()
    page.wait_for_function("() => document.querySelector('#door-counts').textContent.includes('0 of 2')")
    assert CheckIn.objects.get(registration=ada).undone_by == staff
    scan(page, ada.ticket_code)  # and she can be let in again
    page.locator("#door-answer.door-answer-admitted").wait_for()


def test_without_javascript_the_forms_still_work(browser, server, door):
    event, staff, people = door
    context = browser.new_context(base_url=server, viewport=PHONE, java_script_enabled=False)
    try:
        signed_in(context, server, staff)
        page = context.new_page()
        page.goto(f"/events/{event.public_id}/check-in/")
        page.fill("#ticket-code", people["Ada"].ticket_code)
        page.press("#ticket-code", "Enter")
        page.wait_for_url(re.compile(r"/check-in/$"))
        assert "Ada Lovelace" in page.locator("#door-answer.door-answer-admitted").inner_text()
        assert counts(page) == "1 of 2 checked in"
        page.fill("#find-query", "hopper")
        page.click("#find-form button[type=submit]")
        page.locator(f"#attendee-{people['Grace'].pk}").get_by_role("button").click()
        assert "Grace Hopper" in page.locator("#door-answer.door-answer-admitted").inner_text()
        assert counts(page) == "2 of 2 checked in"
    finally:
        context.close()


def test_the_page_in_zh_hant_at_390_px(phone, server, door, tmp_path: Path):
    event, staff, people = door
    context, page = phone("zh-TW")
    signed_in(context, server, staff)
    page.goto(f"/events/{event.public_id}/check-in/")
    assert page.locator("html").get_attribute("lang") == "zh-Hant"
    assert counts(page) == "已報到 0 / 2 人"
    assert page.get_by_label("票券代碼", exact=True).count() == 1
    scan(page, people["Ada"].ticket_code)
    answer = page.locator("#door-answer.door-answer-admitted")
    answer.wait_for()
    assert "已入場" in answer.inner_text() and "Ada Lovelace" in answer.inner_text()
    assert answer.get_by_role("button", name="撤銷這次報到").count() == 1
    page.screenshot(path=str(tmp_path / "door-admitted-zh-Hant-390.png"), full_page=True)
    scan(page, people["Ada"].ticket_code)
    already = page.locator("#door-answer.door-answer-already")
    already.wait_for()
    assert f"已報到過：{hh_mm(people['Ada'])} 由 Mei 辦理" in " ".join(already.inner_text().split())
    page.screenshot(path=str(tmp_path / "door-already-zh-Hant-390.png"), full_page=True)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page scrolls sideways at 390 px ({width} px)"


def test_an_agent_finds_by_name_and_checks_in_after_the_staff_members_press(page, sign_in, door):
    event, staff, people = door
    grace = people["Grace"]
    sign_in(staff)
    page.goto(f"/events/{event.public_id}/check-in/")
    wait_for_tools(page, DOOR_TOOLS)

    found = page.webmcp.call_tool("find_attendee", {"query": "Hopper"})
    assert found["ok"] is True and found["uiUpdated"] is True
    assert (found["confirmed"], found["checkedIn"]) == (2, 0)
    [attendee] = found["attendees"]
    assert attendee["name"] == "Grace Hopper" and attendee["checkedIn"] is False
    assert attendee["email"].startswith("g***@")
    assert not any(registration.ticket_code in json.dumps(found) for registration in people.values())
    assert page.locator(f"#attendee-{attendee['attendeeId']}").is_visible()  # the person sees the list

    start_tool_call(page, "check_in_attendee", {"attendee_id": attendee["attendeeId"]})
    page.wait_for_selector("form[data-webmcp-pending]")
    page.wait_for_timeout(300)
    assert tool_call_pending(page), "a check-in by an agent waits for the staff member's press"
    assert not CheckIn.objects.filter(registration=grace).exists()
    page.locator(PENDING_BUTTON).click()
    result = finish_tool_call(page)
    assert result["ok"] is True and result["admitted"] is True and result["alreadyCheckedIn"] is False
    assert result["attendee"]["name"] == "Grace Hopper" and result["checkedInBy"] == "Mei"
    assert result["uiUpdated"] is True
    assert "Grace Hopper" in page.locator("#door-answer.door-answer-admitted").inner_text()
    page.wait_for_function("() => document.querySelector('#door-counts').textContent.includes('1 of 2')")
    assert CheckIn.objects.get(registration=grace).staff == staff
    wait_for_tools(page, DOOR_TOOLS)


def test_an_agent_is_refused_a_ticket_code_and_another_events_id(page, sign_in, door):
    event, staff, _ = door
    sign_in(staff)
    page.goto(f"/events/{event.public_id}/check-in/")
    wait_for_tools(page, DOOR_TOOLS)
    [tool] = [t for t in page.webmcp.tools() if t["name"] == "check_in_attendee"]
    assert "ticket" not in str(tool["inputSchema"])
    refused = page.webmcp.call_tool("find_attendee", {"query": "", "event_id": "evt-other-event"})
    assert (refused["ok"], refused["code"]) == (False, "INVALID_INPUT")


def test_a_visitor_who_is_not_staff_gets_a_403_and_no_tools(page, sign_in, door, make_user):
    event, _, _ = door
    sign_in(make_user("not-staff"))
    response = page.goto(f"/events/{event.public_id}/check-in/")
    assert response.status == 403
    assert "Only this event's door staff and managers can check people in." in page.inner_text("main")
    page.wait_for_timeout(300)
    assert page.webmcp.tools() == []
    assert page.locator("#ticket-code").count() == 0


def test_an_anonymous_visitor_is_sent_to_sign_in(page, door):
    event, _, _ = door
    page.goto(f"/events/{event.public_id}/check-in/")
    assert "/accounts/login/" in page.url and "check-in" in page.url


# ---- the camera ------------------------------------------------------------------------------------


def qr_video(code: str, path: Path, *, frames: int = 5) -> Path:
    """A Y4M file (YUV4MPEG2, 4:2:0) of a few identical frames showing `code` as a QR code on white:
    what Chromium's fake camera plays in a loop."""
    import segno
    from PIL import Image

    png = path.with_suffix(".png")
    segno.make(code).save(str(png), scale=10, border=4)
    width, height = 640, 480
    frame = Image.new("RGB", (width, height), "white")
    qr = Image.open(png).convert("RGB")
    frame.paste(qr, ((width - qr.width) // 2, (height - qr.height) // 2))
    y, cb, cr = frame.convert("YCbCr").split()
    half = (width // 2, height // 2)
    planes = y.tobytes() + cb.resize(half).tobytes() + cr.resize(half).tobytes()
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420\n".encode())
        for _ in range(frames):
            out.write(b"FRAME\n" + planes)
    return path


def test_the_cameras_scan_admits_the_person(browser, server, door, tmp_path: Path):
    event, staff, people = door
    ada = people["Ada"]
    video = qr_video(ada.ticket_code, tmp_path / "ticket.y4m")
    camera = browser.browser_type.launch(
        executable_path=str(CHROMIUM),
        headless=True,
        args=[
            *CHROMIUM_ARGS,
            "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={video}",
        ],
    )
    try:
        context = camera.new_context(base_url=server, viewport=PHONE)
        signed_in(context, server, staff)
        page = context.new_page()
        page.set_default_timeout(15_000)
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.goto(f"/events/{event.public_id}/check-in/")
        page.get_by_role("button", name="Scan with the camera").click()
        answer = page.locator("#door-answer.door-answer-admitted")
        answer.wait_for()
        assert "Ada Lovelace" in answer.inner_text()
        assert CheckIn.objects.get(registration=ada, undone_at=None).staff == staff
        page.wait_for_function("() => document.querySelector('#door-counts').textContent.includes('1 of 2')")
        # The code stays in front of the camera: it is not sent again (which would say "already").
        page.wait_for_timeout(2500)
        assert page.locator("#door-answer.door-answer-admitted").count() == 1
        page.screenshot(path=str(tmp_path / "door-camera-390.png"), full_page=True)
        page.get_by_role("button", name="Stop the camera").click()
        assert page.locator("#camera-video").is_hidden()
        assert problems == []
    finally:
        camera.close()
