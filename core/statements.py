"""Compiled statements: an ORM statement is built and compiled once per shape, then only its values are
bound. The one place the site relies on Django's private query internals (`SQLCompiler`, a queryset's
`query`), kept for the API search: building and compiling its statement was the largest cost left in
a request (bench/profiles/README.md).

Why: after the second performance round, building and compiling the API search's one statement in the
ORM was the largest cost left in a request (bench/profiles/README.md): more than sending it and
reading its rows. The statement's SQL depends only on its shape (which conditions are present, the
page's limit and offset); the values change from call to call.

How it stays the ORM's statement: the queryset is still written once, with the ORM, by the caller's
`build(shape, values)`. The first call of a shape compiles it twice with two sets of stand-in values and finds
where each value lands among the parameters: as itself, as a LIKE pattern around it (`icontains`), or
as the backend's form of a datetime. Every other parameter must be equal in both compiles and every
found place must give back the second compile's parameters exactly — stand-ins with `%`, `_` and `\\`
check the LIKE escaping — or the shape is not cached and the ORM runs as before. Rows come back through
the compiled statement's own converters, so they are what `values_list(named=True)` gives. With
`STATEMENT_CACHE_VERIFY` (on in the tests) each call also compiles through the ORM and must get the
same SQL and parameters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler
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
    compiler: SQLCompiler  # its converters turn fetched rows into the ORM's values
    row_class: type

    def bind(self, values: Mapping[str, Any], connection: BaseDatabaseWrapper) -> tuple[Any, ...]:
        params = list(self.params)
        for slot in self.slots:
            params[slot.index] = slot.bind(values[slot.name], connection)
        return tuple(params)


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
    return Compiled(sql, tuple(params), tuple(slots), compiler, _row_class(queryset))


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
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        new = tuple.__new__
        row_class = compiled.row_class
        return [new(row_class, row) for row in compiled.compiler.results_iter([fetched], tuple_expected=True)]
