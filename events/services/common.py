"""What the write use cases share: who is asking (`visitor_facts`), the public event a call names, and the
visitor's `stateVersion`, which rises exactly once per real change and never on a no-op."""

from __future__ import annotations

from django.db import connection

from core.visitors import Visitor

from .. import policies
from ..choices import NotificationKind
from ..errors import EventNotFound
from ..mail import outbox
from ..models import Event, Registration, VisitorState


def bump_state_version(*, visitor: Visitor) -> int:
    """Raise the visitor's stateVersion by one; call only inside the transaction of a real change.

    One atomic upsert (PostgreSQL and SQLite ≥ 3.35 both speak it), so concurrent changes by the same
    visitor each count once without a separate lock and read.
    """
    table = connection.ops.quote_name(VisitorState._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (visitor_key, version) VALUES (%s, 1) "
            f"ON CONFLICT (visitor_key) DO UPDATE SET version = {table}.version + 1 RETURNING version",
            [visitor.key],
        )
        return cursor.fetchone()[0]


def tell_person(registration: Registration, kind: NotificationKind, *, visitor: Visitor | None = None) -> int:
    """Tell the registration's person of its change by e-mail, through the outbox: their stateVersion
    rises (this is a real change) and the mail's cause names the registration at that version, so the
    same change is mailed once however often the work runs. Returns the new version."""
    version = bump_state_version(visitor=visitor or Visitor(user=registration.user))
    outbox.notify(
        kind,
        user=registration.user,
        event=registration.event,
        cause=f"registration-{registration.pk}-v{version}",
        registration=registration,
    )
    return version


def bump_state_versions(*, keys: list[str]) -> None:
    """Raise the stateVersion of each visitor in `keys` by one, in one statement whatever their
    number (a batch: the payment sweep); each key once."""
    unique = sorted(set(keys))
    if not unique:
        return
    table = connection.ops.quote_name(VisitorState._meta.db_table)
    values = ", ".join(["(%s, 1)"] * len(unique))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (visitor_key, version) VALUES {values} "
            f"ON CONFLICT (visitor_key) DO UPDATE SET version = {table}.version + 1",
            unique,
        )


def public_event(event_id: str, *, lock: bool = False) -> Event:
    """The event a visitor may open (published or cancelled), locked for the transaction if asked."""
    events = Event.objects.public()
    event = (events.select_for_update(no_key=True) if lock else events).filter(public_id=event_id).first()
    if event is None:
        raise EventNotFound()
    return event


def visitor_facts(
    visitor: Visitor, *, registered: bool = False, waiting: bool = False, holds_offer: bool = False
) -> policies.VisitorFacts:
    return policies.VisitorFacts(
        signed_in=visitor.user is not None,
        has_session=bool(visitor.key),
        registered=registered,
        waiting=waiting,
        holds_offer=holds_offer,
    )
