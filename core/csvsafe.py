"""Cells of a CSV file that a spreadsheet will open: text that starts like a formula is neutralised.

A cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return is read by spreadsheet programs
as a formula (CSV injection, OWASP); people's and organisers' text (names, answers, titles) may begin
that way, so every such cell gets a leading `'`, which the program shows as text.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    """`value` as CSV text that no spreadsheet runs as a formula."""
    text = "" if value is None else str(value)
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text
