"""Compiled statements: an ORM statement is built and compiled once per shape, then only its values are
bound. The one place the site relies on Django's private query internals (`SQLCompiler`, a queryset's
`query`), kept for the few statements whose ORM build and compile cost more than sending them and
reading their rows (bench/profiles/README.md). Each `StatementCache` names, where it is made, the
bench row it keeps (bench/README.md, "Stock pieces"); every other statement is the ORM's, compiled
on each call.

The statement's SQL depends only on its shape (which conditions are present, the page's limit and
offset) and on the database's vendor; the values change from call to call.

How it stays the ORM's statement: the queryset is still written once, with the ORM, by the caller's
`build(shape, values)`. The first call of a shape compiles it twice with two sets of stand-in values and finds
where each value lands among the parameters: as itself, as a LIKE pattern around it (`icontains`), or
as the backend's form of a datetime. Every other parameter must be equal in both compiles and every
found place must give back the second compile's parameters exactly — stand-ins with `%`, `_` and `\\`
check the LIKE escaping — or the shape is not cached and the ORM runs as before. Rows come back through
the converters of the selected expressions, made on each call on the connection that runs it, so they
are what `values_list(named=True)` gives. With `STATEMENT_CACHE_VERIFY` (on in the tests) each call also
compiles through the ORM and must get the same SQL and parameters.

What is kept is bound to no connection: the SQL text, the parameters, where the values go, the
selected expressions and the row class. A compiler (which holds the connection, and so the thread,
that compiled it) is never kept; each call binds and converts on its own thread's connection.

On PostgreSQL these statements, and only these, are also prepared on the connection (psycopg's
server-side binding, prepared once a statement has run `PREPARE_AFTER` times on it): PostgreSQL then
plans them once per connection instead of on every call, which was most of the seat read's time
(bench/profiles/README.md, "a rush attempt"). Every other statement keeps Django's client-side
binding, unprepared (Django's default, for connection poolers: behind one that cannot keep prepared
statements, set STATEMENT_CACHE=0).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import QuerySet
from django.db.models.expressions import ColPairs
from django.db.models.utils import create_namedtuple_class

Build = Callable[[Hashable, Mapping[str, Any]], QuerySet]


class StatementMismatch(AssertionError):
    """With STATEMENT_CACHE_VERIFY: the bound statement is not what the ORM compiles for the values."""


@dataclass(frozen=True)
class Slot:
    index: int  # in the parameters
    name: str  # of the value
    kind: str  # "value", "like" or "datetime"
    prefix: str = ""
    suffix: str = ""

    def bind(self, value: Any, connection: BaseDatabaseWrapper) -> Any:
        if self.kind == "like":
            return f"{self.prefix}{connection.ops.prep_for_like_query(value)}{self.suffix}"
        if self.kind == "datetime":
            return connection.ops.adapt_datetimefield_value(value)
        return value


@dataclass(frozen=True)
class Compiled:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[Slot, ...]
    expressions: tuple[Any, ...]  # the selected expressions: their converters make the ORM's values
    row_class: type

    def bind(self, values: Mapping[str, Any], connection: BaseDatabaseWrapper) -> tuple[Any, ...]:
        params = list(self.params)
        for slot in self.slots:
            params[slot.index] = slot.bind(values[slot.name], connection)
        return tuple(params)

    def convert(self, fetched: list, connection: BaseDatabaseWrapper) -> list:
        """The fetched rows as the ORM's values, through converters made on `connection` (as
        `SQLCompiler.get_converters` and `apply_converters` make and apply them)."""
        converters = []
        for position, expression in enumerate(self.expressions):
            if not expression:
                continue
            found = connection.ops.get_db_converters(expression) + expression.get_db_converters(connection)
            if found:
                converters.append((position, found, expression))
        new, row_class = tuple.__new__, self.row_class
        if not converters:
            return [new(row_class, row) for row in fetched]
        rows: list[Any] = []
        for fetched_row in fetched:
            row = list(fetched_row)
            for position, found, expression in converters:
                value = row[position]
                for converter in found:
                    value = converter(value, expression, connection)
                row[position] = value
            rows.append(new(row_class, row))
        return rows


def stand_ins(values: Mapping[str, Any], round_: int) -> dict[str, Any]:
    """Values of the same types that appear nowhere else in a statement. The second round's strings
    carry LIKE's special characters, so a wrong escaping cannot pass the check."""
    found: dict[str, Any] = {}
    for number, (name, value) in enumerate(sorted(values.items())):
        if isinstance(value, bool) or value is None:
            raise TypeError(f"{name}: a flag or an absent value is part of the shape, not a value")
        if isinstance(value, str):
            found[name] = f"zq{round_}v{number}qz" if round_ == 1 else f"zq{round_}%v_{number}\\qz"
        elif isinstance(value, int):
            found[name] = 1_900_000_000 + round_ * 1_000 + number  # in range of a 32-bit column
        elif isinstance(value, datetime):
            found[name] = datetime(1901, 2, 3, tzinfo=UTC) + timedelta(days=number, microseconds=round_ * 7)
        else:
            raise TypeError(f"{name}: {type(value).__name__} values are not supported")
    return found


def _slot(
    index: int, param: Any, stand_in: Mapping[str, Any], connection: BaseDatabaseWrapper
) -> Slot | None:
    for name, value in stand_in.items():
        if type(param) is type(value) and param == value:
            return Slot(index, name, "value")
        if isinstance(value, str) and isinstance(param, str) and value in param:
            prefix, suffix = param.split(value, 1)
            return Slot(index, name, "like", prefix, suffix)
        if isinstance(value, datetime) and param == connection.ops.adapt_datetimefield_value(value):
            return Slot(index, name, "datetime")
    return None


def _row_class(queryset: QuerySet) -> type:
    """The named tuple `values_list(named=True)` makes for this queryset (NamedValuesListIterable)."""
    query = queryset.query
    names = getattr(queryset, "_fields", ()) or [
        *query.extra_select,
        *query.values_select,
        *query.annotation_select,
    ]
    return create_namedtuple_class(*names)


def _orm_rows(queryset: QuerySet) -> list:
    """The queryset's rows through the ORM, as the same named tuples a compiled statement gives."""
    row_class = _row_class(queryset)
    return [tuple.__new__(row_class, row) for row in queryset]


def compile_shape(
    build: Build, shape: Hashable, values: Mapping[str, Any], connection: BaseDatabaseWrapper
) -> Compiled | None:
    """The shape's statement with the places of its values, or None when they cannot all be found."""
    first, second = stand_ins(values, 1), stand_ins(values, 2)
    queryset = build(shape, first)
    compiler = queryset.query.get_compiler(connection=connection)
    sql, params = compiler.as_sql()
    check_sql, check_params = build(shape, second).query.get_compiler(connection=connection).as_sql()
    if sql != check_sql or len(params) != len(check_params):
        return None
    slots = []
    for index, (param, check) in enumerate(zip(params, check_params, strict=True)):
        slot = _slot(index, param, first, connection)
        if slot is None and param != check:
            return None  # a value reaches the statement in a way not understood here
        if slot is not None:
            if slot.bind(second[slot.name], connection) != check:
                return None
            slots.append(slot)
    expressions = tuple(selected[0] for selected in compiler.select[: compiler.col_count])
    if any(isinstance(expression, ColPairs) for expression in expressions):
        return None  # a composite key's columns: converted in pairs, left to the ORM
    return Compiled(sql, tuple(params), tuple(slots), expressions, _row_class(queryset))


class StatementCache:
    """The compiled statements of one selector, by shape, for the life of the process.

    `build(shape, values)` must give the same SQL for the same shape and the same value names,
    whatever the values (only the parameters change): everything else that changes the SQL, such as
    a page's limit and offset, belongs in `shape`.
    """

    def __init__(self, build: Build, *, size: int = 512) -> None:
        self.build = build
        self.size = size
        self._compiled: dict[Hashable, Compiled | None] = {}
        self._lock = threading.Lock()

    def rows(self, shape: Hashable, values: Mapping[str, Any], *, using: str = DEFAULT_DB_ALIAS) -> list:
        if not settings.STATEMENT_CACHE:  # the ORM's own compile each call (the bench's A/B)
            return _orm_rows(self.build(shape, values).using(using))
        connection = connections[using]
        key = (connection.vendor, using, shape, tuple(sorted(values)))
        try:
            compiled = self._compiled[key]
        except KeyError:
            compiled = compile_shape(self.build, shape, values, connection)
            with self._lock:
                if len(self._compiled) >= self.size:
                    self._compiled.pop(next(iter(self._compiled)))
                self._compiled[key] = compiled
        if compiled is None:
            return _orm_rows(self.build(shape, values).using(using))
        params = compiled.bind(values, connection)
        if settings.STATEMENT_CACHE_VERIFY:
            expected = self.build(shape, values).query.get_compiler(connection=connection).as_sql()
            if expected != (compiled.sql, params):
                raise StatementMismatch(f"{shape}: bound {compiled.sql!r} {params!r}, ORM {expected!r}")
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                server_binding(cursor)
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        return compiled.convert(fetched, connection)


#: psycopg's own default: a statement run this many times on a connection is prepared there.
PREPARE_AFTER = 5


def server_binding(cursor) -> None:
    """Make Django's `cursor` (its wrapper: query logging and execute wrappers stay) send its statement
    with server-side binding, which psycopg prepares once it has run `PREPARE_AFTER` times on the
    connection. Django's client-side cursors never prepare, so the connection's threshold, which
    Django leaves off, changes nothing for them."""
    raw = cursor.db.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = PREPARE_AFTER
    cursor.cursor.close()
    cursor.cursor = psycopg.Cursor(raw)  # what Django's `server_side_binding` option makes
