"""The layouts of bank statement files the site reads, and how one cell of them is read.

Pure functions of text, nothing of Django: `events.bank_statements` finds the header, picks the layout
and builds the rows with these. Each layout names its columns exactly (after `header_name`), so a file
is either recognised by its header or refused; no column is guessed from its content. What each layout
is and where it comes from: docs/bank-statements.md.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date

#: The largest deposit read as a payment, in TWD: a registration never costs this much, so a larger
#: figure is a misread column (an account number, a balance) rather than money to match.
MAX_AMOUNT = 10_000_000


@dataclass(frozen=True)
class Layout:
    """One file layout: the header name of each field's column. `deposit` is the money in; a layout with
    a `withdrawal` column lists money out on rows of their own (`not_a_deposit`). `kept` names the
    layout's other columns that tell two bank rows apart (the balance after it, the time): they enter
    the row's checksum and nothing else."""

    id: str
    date: str
    deposit: str
    reference: str
    withdrawal: str = ""
    payer: str = ""
    account: str = ""
    kept: tuple[str, ...] = ()
    #: The fields whose column a header must name for this layout to be recognised.
    required: tuple[str, ...] = ("date", "deposit", "reference")

    def columns(self) -> tuple[str, ...]:
        """Every column the layout reads, in a fixed order (the order of the row's checksum)."""
        named = (self.date, self.deposit, self.withdrawal, self.reference, self.payer, self.account)
        return tuple(name for name in (*named, *self.kept) if name)

    def matches(self, header: set[str]) -> bool:
        return all(getattr(self, field) in header for field in self.required)


#: Our own layout, the one the sample file and the docs show: always understood, columns in any order.
GENERIC = Layout(
    id="generic",
    date="date",
    deposit="amount",
    reference="reference",
    payer="payer",
    account="account_last5",
)

#: Modelled on the deposit-account ("存款交易明細") exports of retail online banking in Taiwan: ROC dates
#: (115/12/06), money out and in in two columns, the transfer's memo in 備註, the bank's own wording of
#: the transaction in 摘要, often Big5.
TW_PASSBOOK = Layout(
    id="tw_passbook",
    date="交易日期",
    deposit="存入金額",
    withdrawal="支出金額",
    reference="備註",
    payer="戶名",
    account="對方帳號",
    kept=("摘要", "餘額"),
    required=("date", "deposit", "withdrawal", "reference"),
)

#: Modelled on the account-detail ("帳戶明細查詢") exports of corporate online banking in Taiwan:
#: Gregorian dates (2026/12/06), short column names, the payer's memo in 附言 and their account and
#: name beside it, usually UTF-8 with a byte-order mark.
TW_BUSINESS = Layout(
    id="tw_business",
    date="日期",
    deposit="存入",
    withdrawal="支出",
    reference="附言",
    payer="戶名",
    account="帳號",
    kept=("交易時間", "餘額"),
    required=("date", "deposit", "withdrawal", "reference"),
)

#: Tried in this order; the first whose required columns the header names is the file's layout.
LAYOUTS = (GENERIC, TW_PASSBOOK, TW_BUSINESS)

_SPACES = re.compile(r"[\s\u200b-\u200d\u2060\ufeff]+")
_UNIT = re.compile(r"\([^)]*\)$")
_EXCEL_TEXT = re.compile(r'^="(.*)"$', re.DOTALL)


def cell_text(cell: str) -> str:
    """A cell as written, without what spreadsheets wrap around text: `="00123"` (kept leading zeros),
    a leading apostrophe, the surrounding spaces; full-width characters made half-width (NFKC). The
    readers below take a cell's text as this gives it."""
    text = unicodedata.normalize("NFKC", cell).strip()
    if text[:1] == "=" and (wrapped := _EXCEL_TEXT.match(text)):
        return wrapped.group(1).strip()
    return text[1:].strip() if text[:1] == "'" else text


def header_name(cell: str) -> str:
    """A header cell as the layouts name it: no spaces, lower case, without a unit in brackets
    ("存入金額（元）" is 存入金額, "Amount (TWD)" is amount)."""
    name = _SPACES.sub("", cell_text(cell)).lower()
    return _UNIT.sub("", name) or name


def reference_of(text: str) -> str:
    """A payment reference as it is matched, from a statement or anywhere else: half-width, no spaces
    anywhere, upper case (" ＡＢＣ １２" is ABC12)."""
    return _SPACES.sub("", unicodedata.normalize("NFKC", text)).upper()


def account_last5(text: str) -> str:
    """The last five digits of an account number ("822-0012-345678" is 45678), or "" when the cell does
    not end in five digits (empty, or masked as "****"): never digits joined across a mask."""
    digits = re.search(r"([0-9]{5})$", re.sub(r"[\s-]", "", text))
    return digits.group(1) if digits else ""


_GREGORIAN = re.compile(r"^([0-9]{4})([-/.])([0-9]{1,2})\2([0-9]{1,2})$")
_ROC = re.compile(r"^([0-9]{1,3})([-/.])([0-9]{1,2})\2([0-9]{1,2})$")
_COMPACT = re.compile(r"^([0-9]{3,4})([0-9]{2})([0-9]{2})$")


def date_of(text: str) -> date | None:
    """A date as banks write it: 2026-12-06, 2026/12/06, 20261206, or in the ROC calendar (民國 year +
    1911) 115/12/06 or 1151206. A time after it ("2026/12/06 14:03") is not part of the date. None
    when the cell is empty or not a real date."""
    text = text.split(maxsplit=1)[0].partition("T")[0] if text else ""
    found = _GREGORIAN.match(text)
    if found:
        year, month, day = found.group(1, 3, 4)
    elif found := _ROC.match(text):
        year, month, day = str(int(found.group(1)) + 1911), found.group(3), found.group(4)
    elif found := _COMPACT.match(text):
        year, month, day = found.groups()
        year = year if len(year) == 4 else str(int(year) + 1911)
    else:
        return None
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


_AMOUNT = re.compile(
    r"^(?P<sign>[-+]?)(?:NT\$|NTD|TWD|\$)?(?P<sign2>[-+]?)"
    r"(?P<whole>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<fraction>[0-9]*))?(?:元)?$",
    re.IGNORECASE,
)


def amount_of(text: str) -> tuple[int | None, str | None]:
    """(TWD, None) for a cell's text (`cell_text`) such as 1,200, 1200.00, NT$1,200 or １２００; (None, None)
    when it is empty;
    (None, code) when it cannot be money: `bad_amount`, `fractional_amount` (cents other than .00),
    `negative_amount` (-1200, (1,200)), `amount_too_large` (over MAX_AMOUNT)."""
    whole = text
    if not (text.isascii() and text.isdigit()):  # the usual cell, 1200, needs no pattern
        text = _SPACES.sub("", text).replace("\u2212", "-")
        if not text:
            return None, None
        bracketed = text.startswith("(") and text.endswith(")")  # accountants' negative
        found = _AMOUNT.match(text[1:-1] if bracketed else text)
        if not found:
            return None, "bad_amount"
        if found["fraction"] and found["fraction"].strip("0"):
            return None, "fractional_amount"
        whole = found["whole"].replace(",", "")
        if (bracketed or "-" in (found["sign"], found["sign2"])) and whole.strip("0"):
            return None, "negative_amount"
    whole = whole.lstrip("0") or "0"
    if len(whole) > len(str(MAX_AMOUNT)) or int(whole) > MAX_AMOUNT:
        return None, "amount_too_large"
    return int(whole), None
