"""Every CSV the site produces is read by a spreadsheet program, where a cell that starts with `=`,
`+`, `-` or `@` (or a tab or carriage return before one) is run as a formula: an attendee's name, a
username or an e-mail address chosen to be `=HYPERLINK(…)` would run on the organiser's machine
(OWASP, "CSV Injection"). Each cell is neutralised here, in one place: such a cell gets a leading `'`,
which spreadsheet programs show as text and do not evaluate. `writer` is the one CSV writer of the site
(a test finds any other)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, Protocol

#: The first characters a spreadsheet program reads as the start of a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    """`value` as the text of one CSV cell that no spreadsheet program runs as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


class SafeWriter:
    """`csv.writer`, with every cell of every row passed through `safe_cell`."""

    def __init__(self, out: _Writable) -> None:
        self._writer = csv.writer(out)

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow([safe_cell(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: _Writable) -> SafeWriter:
    return SafeWriter(out)
