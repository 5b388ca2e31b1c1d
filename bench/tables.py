"""Markdown tables for what the bench and the soak print and keep in their result files."""

from __future__ import annotations


def verdict(ok: bool) -> str:
    return "✅" if ok else "❌ miss"


def markdown(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        return "| " + " | ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(row)) + " |"

    return "\n".join(
        [line(header), "|" + "|".join("-" * (width + 2) for width in widths) + "|", *map(line, rows)]
    )
