"""An event's ticket types as every reader needs them (layer 1: plain data, no queries).

`Event.ticket_form` keeps the types in the event's own row (models.refresh_ticket_form writes it from
the `TicketType` rows), as `question_form` keeps the questions: a registration reads its type's price
in the statement that reads its seats. An event without rows has one implicit type at its own price,
so events made before ticket types, and free ones, behave as they always did. Which type a call may
take now is decided here (`choose`), on the form and a given moment.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .errors import TicketTypeNotOnSale, TicketTypeRequired, TicketTypeUnknown

MISSING = {"code": "missing", "message": "Name one of the ticket types on sale (ticketTypes)."}
UNKNOWN = {"code": "not_an_option", "message": "Not one of this event's ticket types (ticketTypes)."}
#: The identifier of an event's implicit type (an event without ticket type rows).
IMPLICIT = "general"
IMPLICIT_NAME = {"en": "Regular", "zh-hant": "一般"}


def _in(texts: Mapping[str, str], language: str | None) -> str:
    key = "zh-hant" if (language or "").lower().startswith("zh") else "en"
    return texts.get(key) or texts.get("en") or ""


@dataclass(frozen=True)
class TicketTypeSpec:
    identifier: str
    name: Mapping[str, str]
    price: int  # integer TWD; 0 is free
    sales_start: datetime | None = None
    sales_end: datetime | None = None
    cap: int | None = None
    #: The event's only, implicit type: registrations of it keep `ticket_type` empty.
    implicit: bool = False

    def name_in(self, language: str | None) -> str:
        return _in(self.name, language)

    @property
    def is_free(self) -> bool:
        return self.price == 0

    def on_sale(self, now: datetime) -> bool:
        """Within its sales window (an open end is no limit)."""
        if self.sales_start is not None and now < self.sales_start:
            return False
        return self.sales_end is None or now < self.sales_end

    @property
    def stored(self) -> str:
        """What a registration of this type keeps in `Registration.ticket_type`."""
        return "" if self.implicit else self.identifier


def types_of(event: Any) -> tuple[TicketTypeSpec, ...]:
    """The event's ticket types in their order: its form's, or its one implicit type."""
    form = event.ticket_form or []
    if not form:
        amount = int(event.price_amount) if event.price_amount is not None else 0
        return (TicketTypeSpec(IMPLICIT, IMPLICIT_NAME, amount, implicit=True),)
    return tuple(
        TicketTypeSpec(
            identifier=raw["identifier"],
            name=raw.get("name") or {},
            price=int(raw.get("price") or 0),
            sales_start=_moment(raw.get("salesStart")),
            sales_end=_moment(raw.get("salesEnd")),
            cap=raw.get("cap"),
        )
        for raw in form
    )


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def on_sale(types: Iterable[TicketTypeSpec], now: datetime) -> tuple[TicketTypeSpec, ...]:
    return tuple(spec for spec in types if spec.on_sale(now))


def type_named(types: Iterable[TicketTypeSpec], stored: str) -> TicketTypeSpec | None:
    """The type a registration keeps (`Registration.ticket_type`; "" is the implicit one)."""
    for spec in types:
        if spec.stored == stored or spec.identifier == stored:
            return spec
    return None


def choose(types: tuple[TicketTypeSpec, ...], identifier: str | None, *, now: datetime) -> TicketTypeSpec:
    """The type a registration takes: the one named, or the event's only one. Refuses a name the
    event does not have (`TicketTypeUnknown`), none among several (`TicketTypeRequired`, listing those
    on sale) and a type outside its sales window (`TicketTypeNotOnSale`). Whether a seat of it is
    left is the seat ledger's question, under the event's lock."""
    if not identifier:
        if len(types) == 1:
            chosen = types[0]
        else:
            offered = [spec.identifier for spec in on_sale(types, now)]
            raise TicketTypeRequired(extra={"fields": {"ticket_type": [MISSING]}, "ticketTypes": offered})
    else:
        found = next((spec for spec in types if spec.identifier == identifier), None)
        if found is None:
            offered = [spec.identifier for spec in on_sale(types, now)]
            raise TicketTypeUnknown(extra={"fields": {"ticket_type": [UNKNOWN]}, "ticketTypes": offered})
        chosen = found
    if not chosen.on_sale(now):
        raise TicketTypeNotOnSale()
    return chosen


def price_range(types: Iterable[TicketTypeSpec]) -> tuple[int, int]:
    """The lowest and the highest price of the types (0, 0 for a free event)."""
    prices = [spec.price for spec in types] or [0]
    return min(prices), max(prices)


def all_free(types: Iterable[TicketTypeSpec]) -> bool:
    return all(spec.is_free for spec in types)
