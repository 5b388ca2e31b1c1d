"""A ticket's QR code, drawn on the server (segno): inline SVG for pages, PNG for e-mails.

The QR holds the ticket code and nothing else, so any scanner (ours, a phone's camera app, a USB
scanner typing it) reads the same text the door accepts typed.
"""

from __future__ import annotations

import io

import segno


def ticket_svg(code: str) -> str:
    """Inline SVG markup (no XML declaration, no size: the page's CSS sizes it), dark on light."""
    qr = segno.make(code, error="m")
    return qr.svg_inline(scale=1, border=4, dark="#111827", light="#ffffff", omitsize=True)


def ticket_png(code: str) -> bytes:
    """A PNG big enough for a phone screen held to a scanner (10 px a module)."""
    out = io.BytesIO()
    segno.make(code, error="m").save(out, kind="png", scale=10, border=4)
    return out.getvalue()
