"""The ticket in the confirmation e-mail, end to end: sent through a real SMTP server in the test
process (aiosmtpd), its inline QR image decoded here (zxing-cpp), and the decoded code checks the person
in at the door. The code is also in the text; sending it again works; a cancelled registration's
e-mail carries no ticket."""

from __future__ import annotations

import email
import io
import socket
from email import policy

import pytest
import zxingcpp
from aiosmtpd.controller import Controller
from PIL import Image

from core.visitors import Mode, Visitor
from events import actions
from events.choices import StaffRole
from events.models import EventStaff, Registration
from tests.factories import EventFactory, UserFactory
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


class Inbox:
    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"


@pytest.fixture
def smtp(settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "timeout": 5},
        }
    }
    yield inbox
    controller.stop()


def decoded_qr(message: email.message.EmailMessage) -> str:
    [image] = [part for part in message.walk() if part.get_content_type() == "image/png"]
    assert image["Content-Disposition"].startswith("inline") and image["Content-ID"]
    [found] = zxingcpp.read_barcodes(Image.open(io.BytesIO(image.get_content())))
    assert found.format == zxingcpp.BarcodeFormat.QRCode
    return found.text


def text_of(message: email.message.EmailMessage) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def test_the_emailed_qr_code_checks_the_person_in(smtp):
    event = EventFactory(public_id="evt-mailed-ticket", title="Door night")
    attendee = Visitor(user=UserFactory(username="holder", email="holder@example.org"))
    staff = UserFactory(username="at-the-door")
    EventStaff.objects.create(event=event, user=staff, role=StaffRole.DOOR)
    actions.call("register_event", visitor=attendee, channel=Mode.UI, event_id=event.public_id)
    run_tasks()

    [message] = smtp.messages
    code = decoded_qr(message)
    assert code == Registration.objects.get(user=attendee.user).ticket_code
    assert code in text_of(message)  # the code as text too, for when the QR cannot be read
    result = actions.call(
        "check_in_attendee",
        visitor=Visitor(user=staff),
        channel=Mode.API,
        event_id=event.public_id,
        ticket=code,
    )
    assert result.admitted and result.attendee.name == "holder"


def test_the_holder_can_have_the_ticket_sent_again_and_a_cancelled_one_sends_none(smtp):
    event = EventFactory(public_id="evt-resent-ticket")
    attendee = Visitor(user=UserFactory(username="again", email="again@example.org"))
    actions.call("register_event", visitor=attendee, channel=Mode.UI, event_id=event.public_id)
    actions.call("resend_ticket", visitor=attendee, channel=Mode.UI, event_id=event.public_id)
    run_tasks()
    first, again = smtp.messages
    assert decoded_qr(first) == decoded_qr(again)
    assert "Your ticket" in again["Subject"] or "票" in again["Subject"]

    actions.call("resend_ticket", visitor=attendee, channel=Mode.UI, event_id=event.public_id)
    actions.call("cancel_registration", visitor=attendee, channel=Mode.UI, event_id=event.public_id)
    run_tasks()  # queued before the cancellation, sent after it: no ticket in it
    late = smtp.messages[-1]
    assert not [part for part in late.walk() if part.get_content_type() == "image/png"]
