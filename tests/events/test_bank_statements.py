"""events/bank_statements.py: a bank statement file is read into rows whose problem says why a row is not
a payment, or refused whole, never guessed: each layout, UTF-8 and Big5, what is not a statement, and
random bytes that never make it raise. Sample files of the bank layouts: tests/events/data/bank/."""

from __future__ import annotations

import codecs
from datetime import date
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from events.bank_formats import MAX_AMOUNT, account_last5, amount_of, cell_text, date_of, reference_of
from events.bank_statements import DEFAULT_MAX_BYTES, Statement, read_statement

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "bank"
HEADER = "date,amount,reference,payer,account_last5\n"


def generic(*rows: str, header: str = HEADER, encoding: str = "utf-8") -> bytes:
    return (header + "".join(f"{row}\n" for row in rows)).encode(encoding)


def only_row(statement: Statement):
    assert statement.refusal is None, statement
    assert len(statement.rows) == 1
    return statement.rows[0]


# The generic layout


def test_generic_layout_reads_a_payment():
    statement = read_statement(generic('2026-12-06,"1,200",AG7K2,王小明,12345'))
    assert (statement.format, statement.encoding, statement.refusal) == ("generic", "utf-8", None)
    row = only_row(statement)
    assert (row.line, row.date, row.amount, row.reference) == (2, date(2026, 12, 6), 1200, "AG7K2")
    assert (row.payer, row.account_last5, row.problem) == ("王小明", "12345", None)
    assert len(row.checksum) == 64 and int(row.checksum, 16) >= 0


def test_generic_layout_in_any_column_order_with_extra_columns():
    ordered = read_statement(generic("2026-12-06,1200,AG7K2,Wang,12345"))
    shuffled = read_statement(
        generic(
            "note,12345,Wang,AG7K2,1200,x,2026-12-06",
            header="memo,Account_Last5,PAYER,Reference,Amount (TWD),other,Date\n",
        )
    )
    assert shuffled.format == "generic"
    assert only_row(shuffled) == only_row(ordered)  # the same bank row: the same checksum too


def test_generic_layout_without_the_optional_payer_and_account_columns():
    row = only_row(read_statement(generic("2026-12-06,500,r1", header="date,amount,reference\n")))
    assert (row.amount, row.reference, row.payer, row.account_last5) == (500, "R1", "", "")


def test_a_header_after_a_title_and_lines_counted_from_the_top_of_the_file():
    data = "Statement of December\n\n" + HEADER + '2026-12-06,100,"A\nB",x,\n2026-12-07,200,C,y,\n'
    statement = read_statement(data.encode())
    assert [(row.line, row.reference) for row in statement.rows] == [(4, "AB"), (6, "C")]


def test_tab_separated_file():
    data = HEADER.replace(",", "\t") + "2026-12-06\t1,200\tAG7K2\tWang\t12345\n"
    assert only_row(read_statement(data.encode())).amount == 1200


def test_a_repeated_header_and_blank_lines_are_not_rows():
    data = generic("2026-12-06,100,A,x,", "", ",,,,", HEADER.strip(), "2026-12-07,200,B,y,")
    assert [row.reference for row in read_statement(data).rows] == ["A", "B"]


# The bank layouts


def test_tw_passbook_sample_in_big5_with_roc_dates():
    data = (DATA / "tw_passbook.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    statement = read_statement(data)
    assert (statement.format, statement.encoding, statement.refusal) == ("tw_passbook", "big5", None)
    rows = [
        (r.line, r.date, r.amount, r.reference, r.payer, r.account_last5, r.problem) for r in statement.rows
    ]
    assert rows == [
        (5, date(2026, 12, 1), 1200, "AG7K2", "王小明", "67890", None),
        (6, date(2026, 12, 2), None, "", "", "", "not_a_deposit"),
        (7, date(2026, 12, 2), 1500, "AG8M3", "陳美玲", "89012", None),
        (8, date(2026, 12, 3), 1200, "AG7K2", "王小明", "67890", None),
        (9, date(2026, 12, 4), None, "", "", "", "not_a_deposit"),
    ]
    # The same payment twice on two days: two bank rows, two checksums.
    assert len({row.checksum for row in statement.rows}) == 5


def test_tw_business_sample_in_utf8_with_a_byte_order_mark():
    data = (DATA / "tw_business.csv").read_bytes()
    assert data.startswith(codecs.BOM_UTF8)
    statement = read_statement(data)
    assert (statement.format, statement.encoding, statement.refusal) == ("tw_business", "utf-8-sig", None)
    rows = [(r.date, r.amount, r.reference, r.payer, r.account_last5, r.problem) for r in statement.rows]
    assert rows == [
        (date(2026, 12, 6), 2400, "R7QX4", "林志豪", "34567", None),
        (date(2026, 12, 6), None, "轉帳支出", "", "", "not_a_deposit"),
        (date(2026, 12, 7), 600, "R9TT1", "黃怡君", "", None),  # a masked account gives no digits
    ]


@pytest.mark.parametrize(
    ("header", "row", "layout"),
    [
        (
            "交易日期,摘要,支出金額,存入金額,餘額,備註,對方帳號",
            "2026/12/06,轉入,,800,900,X1,12345678",
            "tw_passbook",
        ),
        ("日期,存入,支出,附言,帳號,戶名", "20261206,800,,X1,12345678,王", "tw_business"),
        ("交易日期,支出金額,存入金額（元）,備註", "1151206,0,800,X1", "tw_passbook"),
    ],
)
def test_bank_layouts_by_their_headers_in_either_encoding(header, row, layout):
    for encoding, name in (("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("cp950", "big5")):
        statement = read_statement(f"{header}\r\n{row}\r\n".encode(encoding))
        assert (statement.format, statement.encoding) == (layout, name)
        found = only_row(statement)
        assert (found.date, found.amount, found.reference, found.problem) == (
            date(2026, 12, 6),
            800,
            "X1",
            None,
        )


@pytest.mark.parametrize(
    ("withdrawal", "deposit", "amount", "problem"),
    [
        ("", "800", 800, None),
        ("0", "800", 800, None),
        ("800", "", None, "not_a_deposit"),
        ("800", "0", None, "not_a_deposit"),
        ("800", "800", None, "bad_amount"),
        ("", "", None, "missing_amount"),
        ("", "-800", None, "negative_amount"),
        ("abc", "800", None, "bad_amount"),
    ],
)
def test_bank_layout_money_in_and_out(withdrawal, deposit, amount, problem):
    data = f"日期,存入,支出,附言\n2026/12/06,{deposit},{withdrawal},X1\n".encode()
    row = read_statement(data).rows[0]
    assert (row.amount, row.problem) == (amount, problem)


# Encodings


def test_big5_generic_file_with_chinese_names():
    data = generic("2026-12-06,1200,ＡＧ７Ｋ２,王小明,12345", "2026-12-07,600,B2,陳美玲,", encoding="cp950")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    statement = read_statement(data)
    assert (statement.encoding, statement.refusal) == ("big5", None)
    assert [(row.payer, row.reference) for row in statement.rows] == [("王小明", "AG7K2"), ("陳美玲", "B2")]


def test_big5_names_with_a_few_of_its_less_used_characters():
    # 翊, 瑄 and 恒 are among Big5's less-used characters (level 2 and the ETEN additions); names have them.
    names = ["張翊廷", "王小明", "陳美玲", "林瑄", "黃怡君", "李宗翰", "陳恒毅", "吳佩珊", "蔡承恩", "許雅婷"]
    rows = [f"2026-12-06,1200,A{number},{name}," for number, name in enumerate(names)]
    statement = read_statement(generic(*rows, encoding="cp950"))
    assert (statement.encoding, statement.refusal) == ("big5", None)
    assert [row.payer for row in statement.rows] == names


@pytest.mark.parametrize(
    ("label", "data"),
    [
        ("Latin-1 inside a word", generic("2026-12-06,1200,A1,Jörg Müller,", encoding="latin-1")),
        ("Latin-1 at a word's start", generic("2026-12-06,1200,A1,Émile,", encoding="latin-1")),
        ("GBK", generic("2026-12-06,1200,A1,张伟 这是简体中文的付款人姓名", encoding="gbk")),
        ("EUC-KR", generic("2026-12-06,1200,A1,한국어 텍스트입니다 김철수", encoding="euc-kr")),
        ("Shift JIS", generic("2026-12-06,1200,A1,山田太郎です", encoding="shift_jis")),
        (
            "UTF-8 with one broken byte",
            generic("2026-12-06,1200,A1,王小明").replace(b"\xe7\x8e", b"\xe7\x20"),
        ),
        (
            "a byte-order mark over Big5",
            codecs.BOM_UTF8 + generic("2026-12-06,1,A1,王小明", encoding="cp950"),
        ),
        ("UTF-16", codecs.BOM_UTF16_LE + HEADER.encode("utf-16-le")),
        ("undecodable bytes", HEADER.encode() + b"\x80\x81\xff\xfe\n"),
    ],
)
def test_what_is_not_surely_utf8_or_big5_is_refused_not_shown_as_mojibake(label, data):
    statement = read_statement(data)
    assert (statement.refusal, statement.rows) == ("unknown_encoding", []), label


# Amounts, dates, references, accounts


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("1200", (1200, None)),
        ("1,200", (1200, None)),
        ("1200.00", (1200, None)),
        ("1,200.0", (1200, None)),
        ("NT$1,200", (1200, None)),
        ("NT$ 1,200", (1200, None)),
        ("ntd1200", (1200, None)),
        ("$1,200", (1200, None)),
        ("1,200元", (1200, None)),
        ("+1200", (1200, None)),
        ("１，２００", (1200, None)),
        ("  007  ", (7, None)),
        ("", (None, None)),
        ("0", (0, None)),
        ("-0", (0, None)),
        ("1200.50", (None, "fractional_amount")),
        ("1200.5", (None, "fractional_amount")),
        ("-1200", (None, "negative_amount")),
        ("−1,200", (None, "negative_amount")),
        ("NT$-1,200", (None, "negative_amount")),
        ("(1,200)", (None, "negative_amount")),
        (str(MAX_AMOUNT), (MAX_AMOUNT, None)),
        (str(MAX_AMOUNT + 1), (None, "amount_too_large")),
        ("9" * 5000, (None, "amount_too_large")),
        ("1,2000", (None, "bad_amount")),
        ("12,00", (None, "bad_amount")),
        ("1.200.00", (None, "bad_amount")),
        ("1e3", (None, "bad_amount")),
        ("twelve", (None, "bad_amount")),
        ("١٢٠٠", (None, "bad_amount")),  # Arabic-Indic digits are not a bank's
        ("USD 1200", (None, "bad_amount")),
    ],
)
def test_amounts(cell, expected):
    assert amount_of(cell_text(cell)) == expected


@pytest.mark.parametrize(
    ("cell", "problem"),
    [
        ("-1200", "negative_amount"),
        ("99999999999999999999", "amount_too_large"),
        ("1200.50", "fractional_amount"),
        ("", "missing_amount"),
        ("0", "zero_amount"),
        ("abc", "bad_amount"),
    ],
)
def test_generic_rows_whose_amount_is_not_a_payment(cell, problem):
    statement = read_statement(generic("2026-12-06,1200,A1,x,", f'2026-12-07,"{cell}",A2,y,'))
    row = statement.rows[1]
    assert (row.amount, row.problem, row.reference) == (None, problem, "A2")


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("2026-12-06", date(2026, 12, 6)),
        ("2026/12/06", date(2026, 12, 6)),
        ("2026.12.06", date(2026, 12, 6)),
        ("2026/1/5", date(2026, 1, 5)),
        ("20261206", date(2026, 12, 6)),
        ("115/12/06", date(2026, 12, 6)),
        ("115-12-06", date(2026, 12, 6)),
        ("99/01/02", date(2010, 1, 2)),
        ("1151206", date(2026, 12, 6)),
        ("２０２６／１２／０６", date(2026, 12, 6)),
        ("2026/12/06 14:03:22", date(2026, 12, 6)),
        ("2026-12-06T14:03:22", date(2026, 12, 6)),
        ("2026-02-30", None),
        ("115/13/01", None),
        ("2026/12-06", None),
        ("06/12/2026", None),
        ("", None),
        ("合計", None),
    ],
)
def test_dates(cell, expected):
    assert date_of(cell_text(cell)) == expected


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("AG7K2", "AG7K2"),
        ("  ag7k2  ", "AG7K2"),
        ("ＡＧ７Ｋ２", "AG7K2"),
        ("ＡＧ　７Ｋ２", "AG7K2"),  # an ideographic space
        ("A G\t7K2", "AG7K2"),
        ("ag\u200b7k2", "AG7K2"),
        ("", ""),
    ],
)
def test_references_are_normalised(cell, expected):
    assert reference_of(cell) == expected


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("12345", "12345"),
        ("822-1234-567-89012", "89012"),
        ('="0081234567890"', "67890"),
        ("'0081234567890", "67890"),
        ("0081****34567", "34567"),
        ("0081234****", ""),
        ("1234", ""),
        ("", ""),
    ],
)
def test_account_last_five_digits(cell, expected):
    assert account_last5(cell_text(cell)) == expected


def test_full_width_reference_in_a_file_is_matched_half_width():
    row = only_row(read_statement(generic("2026-12-06,1200,　ＡＧ ７ｋ２　,王小明,")))
    assert row.reference == "AG7K2"


# Malformed rows and refusals


def test_malformed_rows_each_say_why():
    statement = read_statement(
        generic(
            "2026-12-06,100,A1,x,",
            "2026-12-06,200,A2,x,,,,",  # trailing empty cells are fine
            "2026-13-06,300,A3,x,",
            "2026-12-06,300",
            "2026-12-06,400,A4,Wang, Xiao,12345",  # an unquoted comma in the payer's name
            "2026-12-06,500,A5,x,",
            "2026-12-06,600,A6,x,",
        )
    )
    assert statement.refusal is None
    problems = [(row.line, row.amount, row.problem) for row in statement.rows]
    assert problems == [
        (2, 100, None),
        (3, 200, None),
        (4, 300, "bad_date"),
        (5, None, "missing_columns"),
        (6, None, "extra_columns"),
        (7, 500, None),
        (8, 600, None),
    ]


def test_a_file_of_mostly_unreadable_rows_is_refused_with_its_rows():
    statement = read_statement(
        generic("2026-12-06,100,A1,x,", "yesterday,100,A2,x,", "2026-12-06,lots,A3,x,")
    )
    assert statement.refusal == "too_many_bad_rows"
    assert [row.problem for row in statement.rows] == [None, "bad_date", "bad_amount"]


def test_withdrawals_and_refunds_are_readable_rows_not_bad_ones():
    rows = ["2026-12-06,100,A1,x,"] + ["2026-12-06,-100,A1,x,"] * 5
    assert read_statement(generic(*rows)).refusal is None


@pytest.mark.parametrize(
    ("label", "data"),
    [
        ("PDF", b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"),
        ("XLSX", b"PK\x03\x04\x14\x00\x06\x00\x08\x00" + b"[Content_Types].xml"),
        ("XLS", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(32)),
        ("NUL bytes", HEADER.encode() + b"2026-12-06,1\x00,A,x,\n"),
        ("control bytes", HEADER.encode() + b"2026-12-06,1,A\x07,x,\n"),
        ("HTML saved as .csv", b"<html><body><table><tr><td>date</td></tr></table></body></html>"),
        (
            "a cell over the csv module's limit",
            HEADER.encode() + b'2026-12-06,1,"' + b"a" * 200_000 + b'",x,\n',
        ),
    ],
)
def test_what_is_not_csv_is_refused(label, data):
    assert read_statement(data).refusal == "not_csv", label


def test_too_large_by_max_bytes_and_by_default():
    data = generic("2026-12-06,100,A1,x,")
    assert read_statement(data, max_bytes=len(data)).refusal is None
    statement = read_statement(data, max_bytes=len(data) - 1)
    assert (statement.refusal, statement.rows) == ("too_large", [])
    big = HEADER.encode() + b"2026-12-06,100,A1,x,\n" * (DEFAULT_MAX_BYTES // 21 + 1)
    assert read_statement(big).refusal == "too_large"


def test_the_setting_defaults_to_the_readers_own_limit():
    assert django_settings.BANK_IMPORT_MAX_BYTES == DEFAULT_MAX_BYTES


@pytest.mark.parametrize(
    "data",
    [b"", b"   \r\n\n", codecs.BOM_UTF8, HEADER.encode(), codecs.BOM_UTF8 + HEADER.encode() + b"\n,,,,\n"],
)
def test_empty(data):
    statement = read_statement(data)
    assert (statement.refusal, statement.rows) == ("empty", [])


@pytest.mark.parametrize(
    "data",
    [
        b"when,how much,what\n2026-12-06,100,A1\n",
        "交易日期,金額,說明\n115/12/06,100,A1\n".encode("cp950"),
        b"just one line of text",
    ],
)
def test_unknown_columns(data):
    assert read_statement(data).refusal == "unknown_columns"


# Checksums and size


def test_the_same_file_read_twice_gives_the_same_checksums_and_equal_rows_differ():
    data = generic("2026-12-06,100,A1,x,", "2026-12-06,100,A1,x,", "2026-12-07,100,A1,x,")
    first, second = read_statement(data), read_statement(data)
    assert [row.checksum for row in first.rows] == [row.checksum for row in second.rows]
    assert len({row.checksum for row in first.rows}) == 3


def test_a_row_in_two_overlapping_statements_has_one_checksum():
    december = ["2026-12-01,100,A1,x,", "2026-12-02,200,A2,y,", "2026-12-03,300,A3,z,"]
    first = read_statement(generic(*december[:2]))
    second = read_statement(generic(*december[1:]))
    assert first.rows[1].checksum == second.rows[0].checksum
    assert first.rows[0].checksum != second.rows[1].checksum


def test_the_checksum_belongs_to_the_layout():
    same_cells = "2026/12/06,800,,X1"
    passbook = read_statement(f"交易日期,存入金額,支出金額,備註\n{same_cells}\n".encode())
    business = read_statement(f"日期,存入,支出,附言\n{same_cells}\n".encode())
    assert only_row(passbook).checksum != only_row(business).checksum


def test_ten_thousand_rows():
    rows = [f"2026-12-{i % 28 + 1:02d},{1000 + i % 500},R{i % 700},王小明,{i % 3:05d}" for i in range(10_000)]
    for encoding in ("utf-8", "cp950"):
        statement = read_statement(generic(*rows, encoding=encoding))
        assert statement.refusal is None
        assert len(statement.rows) == 10_000
        assert all(row.problem is None for row in statement.rows)
        assert len({row.checksum for row in statement.rows}) == 10_000


# Whatever comes in, an answer and no exception

CSVISH = st.text(
    alphabet=st.sampled_from(
        list("0123456789,;\t\"\r\n -./$()='NTabcAG元存入支出日期ＡＧ１２　\x00\x1a\u200b")
    ),
    max_size=300,
)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data):
    assert isinstance(read_statement(data), Statement)
    assert isinstance(read_statement(codecs.BOM_UTF8 + HEADER.encode() + data), Statement)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(
    body=CSVISH,
    header=st.sampled_from([HEADER, "日期,存入,支出,附言\n", "交易日期,支出金額,存入金額,備註\n"]),
)
def test_random_statements_never_raise_and_their_rows_keep_their_promises(body, header):
    for encoding in ("utf-8", "cp950"):
        try:
            data = (header + body).encode(encoding)
        except UnicodeEncodeError:
            continue
        statement = read_statement(data, max_bytes=10_000)
        assert statement.refusal is not None or statement.rows
        for row in statement.rows:
            assert row.line >= 2
            assert row.amount is None or 0 < row.amount <= MAX_AMOUNT
            assert row.problem is not None or (row.amount is not None and row.date is not None)
            assert row.account_last5 == "" or (len(row.account_last5) == 5 and row.account_last5.isdigit())
            assert row.reference == row.reference.strip().upper()
        assert len({row.checksum for row in statement.rows}) == len(statement.rows)
