"""Server-rendered SVG charts: no script, no inline style (CSP unchanged), presentation attributes only.

Each chart has a <title> and <desc>; the page also shows the numbers as a table, the text equivalent.
Every label is our own text or a code (tool, reason, mode), escaped all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from html import escape

from django.utils.safestring import SafeString, mark_safe

COLOURS = {
    "ui": "#2563eb",
    "agent": "#15803d",
    "api": "#7c3aed",
    "admin": "#64748b",
    "mcp": "#c2410c",
}
WIDTH, HEIGHT, LEFT, BOTTOM, TOP, RIGHT = 720, 260, 44, 28, 12, 12


def _svg(
    title: str, desc: str, body: list[str], *, width: int = WIDTH, height: int = HEIGHT, ident: str
) -> SafeString:
    head = (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{ident}-title {ident}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-title">{escape(title)}</title><desc id="{ident}-desc">{escape(desc)}</desc>'
    )
    return mark_safe(head + "".join(body) + "</svg>")


def lines_by_day(
    series: dict[str, list[int]], days: Sequence[date], *, title: str, desc: str, ident: str
) -> SafeString:
    """One line per series over the days, with a y axis from 0 to the largest value."""
    peak = max([1, *(value for values in series.values() for value in values)])
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(1, len(days) - 1)

    def point(i: int, value: int) -> str:
        return f"{LEFT + i * step:.1f},{TOP + plot_h - value / peak * plot_h:.1f}"

    body = [
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_h}" stroke="#94a3b8"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#94a3b8"/>',
        f'<text x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end" font-size="11" fill="#475569">{peak}</text>',
        f'<text x="{LEFT - 6}" y="{TOP + plot_h}" text-anchor="end" font-size="11" fill="#475569">0</text>',
    ]
    for i in (0, len(days) // 2, len(days) - 1):
        if 0 <= i < len(days):
            body.append(
                f'<text x="{LEFT + i * step:.1f}" y="{HEIGHT - 8}" text-anchor="middle" font-size="11" '
                f'fill="#475569">{days[i]:%m-%d}</text>'
            )
    for name, values in series.items():
        if not any(values):
            continue
        path = "M" + " L".join(point(i, value) for i, value in enumerate(values))
        colour = COLOURS.get(name, "#0f172a")
        body.append(
            f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2.5" '
            f'stroke-linejoin="round" data-series="{escape(name)}"/>'
        )
    return _svg(title, desc, body, ident=ident)


def bars(
    rows: Sequence[tuple[str, float]], *, title: str, desc: str, ident: str, percent: bool = False
) -> SafeString:
    """Horizontal bars, one per row, longest = the largest value (or 100 % for rates)."""
    height = TOP + BOTTOM + 26 * max(1, len(rows))
    label_w, plot_w = 230, WIDTH - 230 - RIGHT - 60
    peak = 1.0 if percent else max([1.0, *(value for _, value in rows)])
    body = []
    for i, (label, value) in enumerate(rows):
        y = TOP + i * 26
        width = max(1.0, value / peak * plot_w)
        shown = f"{value:.0%}" if percent else f"{value:.0f}"
        body += [
            f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end" font-size="12" fill="#0f172a">'
            f"{escape(label)}</text>",
            f'<path d="M{label_w},{y + 4} h{width:.1f} v16 h-{width:.1f} Z" fill="#2563eb"/>',
            f'<text x="{label_w + width + 6:.1f}" y="{y + 16}" font-size="12" fill="#334155">{shown}</text>',
        ]
    if not rows:
        body.append(f'<text x="{LEFT}" y="{TOP + 16}" font-size="12" fill="#475569">—</text>')
    return _svg(title, desc, body, height=height, ident=ident)
