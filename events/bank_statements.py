"""Reading a bank statement file an organiser uploads, to match its deposits to paid registrations.

A pure function of the file's bytes: no model, no database, no settings. `read_statement` recognises the
encoding and the layout (`events.bank_formats`), reads each row into a `StatementRow` whose `problem`
says why it is not a payment, and refuses the file as a whole when it cannot be read honestly: a wrong
guess would match money to the wrong person, so what is unsure is refused, never guessed. The formats,
the problem and refusal codes: docs/bank-statements.md.
"""

from __future__ import annotations

import codecs
import csv
import functools
import hashlib
import io
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from itertools import islice

from events.bank_formats import (
    LAYOUTS,
    Layout,
    account_last5,
    amount_of,
    cell_text,
    date_of,
    header_name,
    reference_of,
)

#: The largest file read when the caller passes no `max_bytes`; the site passes its
#: `BANK_IMPORT_MAX_BYTES` setting, whose default is the same.
DEFAULT_MAX_BYTES = 5 * 1024 * 1024

#: Row problems that mean the row could not be read at all; when they are more than half of the rows,
#: the file is refused (`too_many_bad_rows`): it is not the statement it claims to be. A withdrawal, a
#: negative or a zero amount is a readable row that is not a payment, and does not count.
UNREADABLE = frozenset(
    {"missing_columns", "extra_columns", "bad_date", "bad_amount", "missing_amount"}
    | {"fractional_amount", "amount_too_large"}
)

#: How many non-blank records may come before the header (a bank's title, account and period lines).
HEADER_SEARCH_RECORDS = 20
DELIMITERS = (",", "\t", ";")

_SIGNATURES = (
    b"%PDF",  # PDF
    b"PK\x03\x04",  # a zip: XLSX, ODS
    b"\xd0\xcf\x11\xe0",  # an OLE file: XLS
    b"\x89PNG",
    b"\xff\xd8\xff",  # JPEG
    b"GIF8",
    b"\x1f\x8b",  # gzip
)
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
#: A character between two Latin letters ("J?rg"): what a Latin-1 "ö" and the letter after it read as
#: Big5 look like; Chinese text never sits inside a Latin word.
_INSIDE_A_WORD = re.compile(r"[A-Za-z][^\x00-\x7f][a-z]")


@dataclass(frozen=True)
class StatementRow:
    line: int  # 1-based line number in the file where the row starts (a header on the first line is 1)
    date: date | None
    amount: int | None  # the deposit in integer TWD; None when the row has none that is valid
    reference: str  # normalised by `reference_of`; "" when none
    payer: str
    account_last5: str  # 5 digits or ""
    checksum: str  # sha256 hex: the same bank row read again has the same one
    problem: str | None  # None for a payment, or a stable code (docs/bank-statements.md)


@dataclass(frozen=True)
class Statement:
    format: str  # the layout's id ("generic", "tw_passbook", "tw_business"); "" when none was recognised
    encoding: str  # "utf-8", "utf-8-sig", "big5"; "" when the bytes were not decoded
    rows: list[StatementRow]
    refusal: str | None  # None, or why the whole file is refused (its rows are still reported)


def read_statement(data: bytes, *, max_bytes: int | None = None) -> Statement:
    """The statement in `data`, or its refusal. Never raises on bad input; linear in the file's size."""
    if len(data) > (DEFAULT_MAX_BYTES if max_bytes is None else max_bytes):
        return _refused("too_large")
    if data.startswith(_WIDE_BOMS):
        return _refused("unknown_encoding")  # UTF-16 or UTF-32 ("Unicode text" from a spreadsheet)
    if data.startswith(_SIGNATURES) or b"\x00" in data:
        return _refused("not_csv")
    decoded = _decode(data)
    if decoded is None:
        return _refused("unknown_encoding")
    text, encoding = decoded
    text = text.rstrip("\x1a")  # an old end-of-file mark
    if not text.strip():
        return _refused("empty", encoding)
    if _CONTROL.search(text) or text.lstrip().startswith("<"):  # binary, or HTML or XML saved as .csv
        return _refused("not_csv", encoding)
    try:
        return _parse(text, encoding)
    except csv.Error:  # a field over the csv module's limit: not a statement's line
        return _refused("not_csv", encoding)


def _refused(refusal: str, encoding: str = "") -> Statement:
    return Statement(format="", encoding=encoding, rows=[], refusal=refusal)


def _decode(data: bytes) -> tuple[str, str] | None:
    """The text and the encoding it was in, or None when no encoding we read decodes it for sure."""
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data.decode("utf-8-sig"), "utf-8-sig"
        except UnicodeDecodeError:
            return None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp950")
    except UnicodeDecodeError:
        return None
    return (text, "big5") if _plausible_big5(text) else None


def _plausible_big5(text: str) -> bool:
    """Whether text that decoded as Big5 (cp950) is Big5 and not another encoding read as it: another
    encoding's bytes land on cp950's kana, Cyrillic and box-drawing extensions, inside Latin words
    (Latin-1), or mostly on Big5's less-used characters (GBK, Latin-1); Chinese text in Big5 is mostly
    of its frequently-used ones. A file that fails is refused rather than shown as mojibake."""
    counts = Counter(_NON_ASCII.findall(text))
    less_used, extension = _big5_areas()
    if any(char in extension for char in counts) or _INSIDE_A_WORD.search(text):
        return False
    return 4 * sum(n for char, n in counts.items() if char in less_used) <= counts.total()


@functools.cache
def _big5_areas() -> tuple[frozenset[str], frozenset[str]]:
    """(Big5's less-used characters, what cp950 adds to Big5), as the characters cp950 decodes them to."""

    def area(first: int, last: int) -> set[str]:
        chars = set()
        for code in range(first, last + 1):
            try:
                chars.add(code.to_bytes(2, "big").decode("cp950"))
            except UnicodeDecodeError:
                continue
        return chars

    frequent = area(0xA140, 0xC67E)
    less_used = area(0xC940, 0xF9DC)  # F9D6–F9DC: seven characters common in names (碁銹裏墻恒粧嫺)
    extension = (area(0xC6A1, 0xC8FE) | area(0xF9DD, 0xF9FE)) - frequent - less_used
    return frozenset(less_used), frozenset(extension)


def _parse(text: str, encoding: str) -> Statement:
    """Find the header among the first records, with the first delimiter that gives one, and read on."""
    for delimiter in DELIMITERS:
        records = _records(text, delimiter)
        for _line, cells in islice(records, HEADER_SEARCH_RECORDS):
            names = [header_name(cell) for cell in cells]
            layout = next((layout for layout in LAYOUTS if layout.matches(set(names))), None)
            if layout is not None:
                rows = _rows(layout, cells, records)
                return Statement(layout.id, encoding, rows, _refusal_of(rows))
    return _refused("unknown_columns", encoding)


def _records(text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(line where it starts, cells) of each record that is not blank; a quoted cell may span lines."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    start = 1
    for cells in reader:
        line, start = start, reader.line_num + 1
        if any(cell.strip() for cell in cells):
            yield line, cells


def _refusal_of(rows: list[StatementRow]) -> str | None:
    if not rows:
        return "empty"
    unreadable = sum(row.problem in UNREADABLE for row in rows)
    return "too_many_bad_rows" if 2 * unreadable > len(rows) else None


def _rows(layout: Layout, header: list[str], records: Iterator[tuple[int, list[str]]]) -> list[StatementRow]:
    """Each record after the header as a row (the header repeated, as on each page of some exports, is
    not one). Identical rows are told apart by how many came before them, so a file read again gives
    every row the checksum it had, and two equal rows two checksums."""
    names = [header_name(cell) for cell in header]
    position: dict[str, int] = {}
    for index, name in enumerate(names):
        position.setdefault(name, index)
    columns = layout.columns()
    indexes = [position.get(name, -1) for name in columns]
    width = max(indexes) + 1
    slot = {name: index for index, name in enumerate(columns)}
    seen: dict[str, int] = {}
    rows = []
    for line, cells in records:
        if cells == header:
            continue
        count = len(cells)
        texts = [cell_text(cells[index]) if 0 <= index < count else "" for index in indexes]
        texts.append("")  # what an optional column the layout does not have reads as
        content = "\x1f".join(texts)
        occurrence = seen[content] = seen.get(content, -1) + 1
        checksum = hashlib.sha256(f"{layout.id}\x1e{content}\x1e{occurrence}".encode()).hexdigest()

        def text(name: str, texts: list[str] = texts) -> str:
            return texts[slot.get(name, -1)]

        day = date_of(text(layout.date))
        amount, problem = _deposit(layout, text)
        if count < width:
            problem, amount = "missing_columns", None
        elif any(extra.strip() for extra in cells[len(names) :]):
            # An unquoted delimiter inside a cell: every column after it has moved.
            problem, amount = "extra_columns", None
        elif day is None:
            problem = "bad_date"
        rows.append(
            StatementRow(
                line=line,
                date=day,
                amount=amount,
                reference=reference_of(text(layout.reference)),
                payer=" ".join(text(layout.payer).split()),
                account_last5=account_last5(text(layout.account)),
                checksum=checksum,
                problem=problem,
            )
        )
    return rows


def _deposit(layout: Layout, cell: Callable[[str], str]) -> tuple[int | None, str | None]:
    """(the deposit in TWD, None), or (None, why the row is not one)."""
    deposit, problem = amount_of(cell(layout.deposit))
    if not layout.withdrawal:
        if problem or deposit is None:
            return None, problem or "missing_amount"
        return (None, "zero_amount") if deposit == 0 else (deposit, None)
    withdrawal, withdrawal_problem = amount_of(cell(layout.withdrawal))
    if problem or withdrawal_problem:
        return None, problem or withdrawal_problem
    if deposit and withdrawal:
        return None, "bad_amount"  # money in and out on one row: not a bank's row
    if deposit:
        return deposit, None
    return None, "not_a_deposit" if withdrawal else "missing_amount"
