"""`{% ticket_qr registration %}`: the holder's ticket as a QR code (inline SVG, drawn by segno).

Only the QR is on the page, never the code as text: the page is the holder's, but a browser agent reads
its text; the code as text is in the holder's e-mail.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from events.qr import ticket_svg

register = template.Library()


@register.simple_tag
def ticket_qr(registration) -> SafeString:
    if registration is None or not registration.is_active or not registration.ticket_code:
        return mark_safe("")
    svg = mark_safe(ticket_svg(registration.ticket_code))  # segno's markup of our own code
    return format_html(
        '<figure class="ticket-qr" aria-label="{}">{}<figcaption>{}</figcaption></figure>',
        _("Your ticket's QR code"),
        svg,
        _("Your ticket: show this at the door."),
    )
