"""The holder's ticket on the pages: a QR code (never the code as text) on the event page and My events,
a button to have it e-mailed again; nobody else sees it; tool results only say whether there is one."""

from __future__ import annotations

import io
import re

import pytest
import zxingcpp
from django.core import mail
from django.test import Client
from PIL import Image

from core.visitors import Mode, Visitor
from events import actions
from events.models import Activity, Registration
from tests.tasks import run_tasks

from .conftest import EN

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def registered(user, event) -> str:
    actions.call("register_event", visitor=Visitor(user=user), channel=Mode.UI, event_id=event.public_id)
    return Registration.objects.get(user=user, event=event).ticket_code


def qr_codes_in(html: str) -> list[str]:
    """The text of each QR code drawn in `html`: segno's SVG path (horizontal runs of dark modules)
    painted into an image and decoded."""
    decoded = []
    for svg in re.findall(r"<svg viewBox.*?</svg>", html, re.S):
        path = re.search(r'd="([^"]+)"', svg.split("qrline")[1]).group(1)
        size = int(re.search(r'viewBox="0 0 (\d+) \d+"', svg).group(1))
        image = Image.new("L", (size, size), 255)
        x = y = 0.0
        for command, a, b in re.findall(r"([Mmh])(-?[\d.]+)(?:v|\s|,)?(-?[\d.]*)", path):
            if command == "M":
                x, y = float(a), float(b)
            elif command == "m":
                x, y = x + float(a), y + float(b)
            else:
                for dx in range(int(float(a))):
                    image.putpixel((int(x) + dx, int(y - 0.5)), 0)
                x += float(a)
        buffer = io.BytesIO()
        image.resize((size * 8, size * 8), Image.NEAREST).save(buffer, "PNG")
        found = zxingcpp.read_barcodes(Image.open(io.BytesIO(buffer.getvalue())))
        decoded += [item.text for item in found]
    return decoded


def test_the_holder_sees_the_qr_on_the_event_page_and_my_events_and_never_the_code(
    signed_in_en_client, user, event
):
    code = registered(user, event)
    for path in (f"/events/{event.public_id}/", "/me/"):
        html = signed_in_en_client.get(path).content.decode()
        assert qr_codes_in(html) == [code], path
        assert code not in html, path  # the code as text is in the holder's e-mail only
    other = Client(headers=EN)
    assert not qr_codes_in(other.get(f"/events/{event.public_id}/").content.decode())


def test_the_resend_button_emails_the_ticket_again(signed_in_en_client, user, event):
    registered(user, event)
    run_tasks()
    response = signed_in_en_client.post(f"/events/{event.public_id}/ticket/resend/", {"next": "/me/"})
    assert response.status_code == 302
    run_tasks()
    assert len(mail.outbox) == 2 and mail.outbox[-1].subject.startswith("Your ticket")


def test_resend_without_a_ticket_says_so_on_the_event_page(signed_in_en_client, event):
    response = signed_in_en_client.post(f"/events/{event.public_id}/ticket/resend/", follow=True)
    assert response.redirect_chain == [(f"/events/{event.public_id}/", 302)]
    said = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert said == [("error", "You have no ticket for this event.")]
    run_tasks()
    assert not mail.outbox
    assert list(Activity.objects.filter(action="resend_ticket").values_list("mode", "outcome")) == [
        ("ui", "NO_TICKET")
    ]


def test_a_tool_result_says_only_whether_the_person_holds_a_ticket(user, event):
    code = registered(user, event)
    action = actions.ACTIONS["get_event_details"]
    performed = actions.perform(
        action, actions.Caller(visitor=Visitor(user=user), channel=Mode.MCP), {"event_id": event.public_id}
    )
    body = performed.body()
    assert body["hasTicket"] is True and code not in str(body)
    registration = actions.call(
        "register_event", visitor=Visitor(user=user), channel=Mode.MCP, event_id=event.public_id
    )
    assert code not in str(actions.ACTIONS["register_event"].output(registration).data)
