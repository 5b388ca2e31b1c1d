"""How an event's time, price and seats read on a page, in the active language and the site's time zone."""

from __future__ import annotations

from django import template
from django.utils import formats, timezone
from django.utils.dateformat import format as format_date
from django.utils.numberformat import format as format_number
from django.utils.translation import gettext, ngettext, pgettext

from events import tickets
from events.choices import PaymentStatus, Price, RegistrationStatus
from events.models import Event, Registration

register = template.Library()


def _date(value) -> str:
    # Translators: a PHP-style date format (Django's `date` filter), e.g. "Sat, Jan 23, 2027".
    return format_date(value, pgettext("date format", "D, M j, Y"))


@register.filter
def event_date(event: Event) -> str:
    """The start date, e.g. "Sat, Jan 23, 2027" / "2027年1月23日（星期六）"."""
    return _date(timezone.localtime(event.starts_at))


@register.filter
def event_when(event: Event) -> str:
    """Start and end, e.g. "Sat, Jan 23, 2027, 10:00–12:00" (dates repeated only when they differ)."""
    start, end = timezone.localtime(event.starts_at), timezone.localtime(event.ends_at)
    if start.date() == end.date():
        return gettext("%(date)s, %(start)s–%(end)s") % {
            "date": _date(start),
            "start": format_date(start, "H:i"),
            "end": format_date(end, "H:i"),
        }
    return gettext("%(start_date)s, %(start)s – %(end_date)s, %(end)s") % {
        "start_date": _date(start),
        "start": format_date(start, "H:i"),
        "end_date": _date(end),
        "end": format_date(end, "H:i"),
    }


@register.filter
def event_hours(event: Event) -> str:
    """The hours, e.g. "10:00–12:00"; with the end date when the event ends on another day."""
    start, end = timezone.localtime(event.starts_at), timezone.localtime(event.ends_at)
    if start.date() == end.date():
        return f"{format_date(start, 'H:i')}–{format_date(end, 'H:i')}"
    return gettext("%(start)s – %(end_date)s, %(end)s") % {
        "start": format_date(start, "H:i"),
        "end_date": _date(end),
        "end": format_date(end, "H:i"),
    }


@register.filter
def twd(amount: int | None) -> str:
    """An amount of money, e.g. "TWD 1,200" (integer TWD)."""
    return gettext("%(currency)s %(amount)s") % {
        "currency": "TWD",
        # Amounts are grouped by thousands in every language (zh-Hant's number format has no separator).
        "amount": format_number(
            amount or 0, ".", decimal_pos=0, grouping=3, thousand_sep=",", force_grouping=True
        ),
    }


@register.filter
def event_price(event: Event) -> str:
    """ "Free", the amount, e.g. "TWD 1,200", or, when its ticket types cost different amounts,
    "from TWD 600" (or "Free or from TWD 600" when one of them is free)."""
    if event.ticket_form:
        types = tickets.types_of(event)
        paid = sorted(spec.price for spec in types if not spec.is_free)
        if not paid:
            return gettext("Free")
        if len(paid) == len(types) and paid[0] == paid[-1]:
            return twd(paid[0])
        if len(paid) == len(types):
            return gettext("from %(price)s") % {"price": twd(paid[0])}
        return gettext("Free or from %(price)s") % {"price": twd(paid[0])}
    if event.price == Price.FREE or event.price_amount is None:
        return gettext("Free")
    return twd(int(event.price_amount))


@register.filter
def event_seats(event: Event) -> str:
    """ "Full", "3 seats left" or "No seat limit" (uses the `with_seats()` annotation when present)."""
    if event.capacity is None:
        return gettext("No seat limit")
    if event.is_full:
        return gettext("Full")
    left = getattr(event, "seats_left", None)
    if left is None:  # not annotated by a selector: say the capacity rather than count here
        return ngettext("%(count)s seat", "%(count)s seats", event.capacity) % {"count": event.capacity}
    return ngettext("%(count)s seat left", "%(count)s seats left", left) % {"count": left}


@register.filter
def payment_line(registration: Registration) -> str:
    """One line for My events saying where a registration's money stands ("" for a free one)."""
    if not registration.amount:
        return ""
    amount = twd(registration.amount)
    status = registration.payment_status
    if status == PaymentStatus.AWAITING and registration.payment_due_at:
        when = formats.date_format(timezone.localtime(registration.payment_due_at), "DATETIME_FORMAT")
        return gettext("%(amount)s to pay by %(when)s") % {"amount": amount, "when": when}
    if status == PaymentStatus.CHECKING:
        return gettext("%(amount)s: your transfer is being checked") % {"amount": amount}
    if status == PaymentStatus.AT_DOOR:
        return gettext("%(amount)s due at the door") % {"amount": amount}
    if status == PaymentStatus.PAID:
        return gettext("%(amount)s paid") % {"amount": amount}
    if status == PaymentStatus.REFUNDED:
        refunded = twd(registration.refunded_amount)
        return gettext("%(refunded)s refunded") % {"refunded": refunded}
    if registration.status == RegistrationStatus.EXPIRED:
        return gettext("Not paid in time: the seat went back")
    return str(PaymentStatus(status).label)
