"""The peer's side of `make bench-peer`, run by pretix's own interpreter, never by ours (the path of
which `.venv/bin/python -m bench.peer install` prints):

    $PRETIX_PYTHON -P bench/pretix_side.py seed --capacity 5000
    $PRETIX_PYTHON -P bench/pretix_side.py check --organizer bench --event peer
    $PRETIX_PYTHON -P bench/pretix_side.py statements --host 127.0.0.1:8123 --token …

`PRETIX_CONFIG_FILE` and `DJANGO_SETTINGS_MODULE` (pretix's settings with a dummy e-mail backend) come
from bench/peer.py, which writes both. `-P` keeps this file's directory off `sys.path`: the bench's own
modules (`settings`, `profile`, `load`) would shadow pretix's and the standard library's. Each command
prints one JSON object on its last line, as bench/tasks.py does for our side.

Seeding goes through pretix's ORM, as its own organiser back office would: an organiser (its `save()`
makes the sales channels), a live event with pretix's default plugins and `set_defaults()`, attendee
names and the invoice address off (so the checkout asks only for an e-mail), one free item with a quota,
and a team with every permission holding one API token.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402
from django_scopes import scopes_disabled  # noqa: E402
from pretix.base.models import Event, Item, Order, OrderPosition, Organizer, Quota, Team  # noqa: E402

ORGANIZER = "bench"
EVENT = "peer"
CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


def seed(args: argparse.Namespace) -> dict:
    with scopes_disabled():
        organizer = Organizer.objects.create(name="Bench organiser", slug=ORGANIZER)
        starts = timezone.now() + timedelta(days=30)
        event = Event.objects.create(
            organizer=organizer,
            name="Bench: a free event",
            slug=EVENT,
            currency="EUR",
            date_from=starts,
            date_to=starts + timedelta(hours=2),
            live=True,
            plugins=settings.PRETIX_PLUGINS_DEFAULT,
        )
        event.set_defaults()
        event.settings.attendee_names_asked = False
        event.settings.invoice_address_asked = False
        item = Item.objects.create(event=event, name="Free ticket", default_price=0, admission=True)
        quota = Quota.objects.create(event=event, name="Seats", size=args.capacity)
        quota.items.add(item)
        team = Team.objects.create(
            organizer=organizer,
            name="Bench",
            all_events=True,
            all_event_permissions=True,
            all_organizer_permissions=True,
        )
        token = team.tokens.create(name="bench")
        return {
            "organizer": organizer.slug,
            "event": event.slug,
            "item": item.pk,
            "quota": quota.size,
            "token": token.token,
        }


def check(args: argparse.Namespace) -> dict:
    """What pretix's database holds after a write run: orders by status, positions, the quota."""
    with scopes_disabled():
        event = Event.objects.get(organizer__slug=args.organizer, slug=args.event)
        statuses: dict[str, int] = {}
        for status in Order.objects.filter(event=event).values_list("status", flat=True):
            statuses[status] = statuses.get(status, 0) + 1
        positions = OrderPosition.objects.filter(order__event=event, order__status=Order.STATUS_PAID)
        quota = event.quotas.get()
        return {
            "orders": statuses,
            "paid_positions": positions.count(),
            "distinct_emails": Order.objects.filter(event=event).values("email").distinct().count(),
            "quota": quota.size,
        }


# ---- SQL statements per operation, in-process -----------------------------------------------------


def _counted(client: Client, method: str, path: str, expect: tuple[int, ...], **extra) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as queries:
        response = getattr(client, method)(path, **extra)
    if response.status_code not in expect:
        raise SystemExit(
            f"{method.upper()} {path} answered {response.status_code}: {response.content[:400]!r}"
        )
    statements = sum(1 for query in queries.captured_queries if not query["sql"].startswith(CONTROL))
    return statements, response


def statements(args: argparse.Namespace) -> dict:
    """Statements per request, as the bench's clients send them (its Host, so pretix's domain routing
    answers as on the server). Every answer is checked like the load's."""
    host = {"HTTP_HOST": args.host}
    base = f"/{ORGANIZER}/{EVENT}/"
    with scopes_disabled():
        item = Item.objects.get(event__slug=EVENT).pk
    counts: dict[str, int] = {}
    reader = Client(**host)
    _counted(reader, "get", base, (200,))  # warm: the settings cache, the compiled templates
    counts["event page"], _ = _counted(reader, "get", base, (200,))
    counts["organiser page"], _ = _counted(Client(**host), "get", f"/{ORGANIZER}/", (200,))
    api = Client(**host, HTTP_AUTHORIZATION=f"Token {args.token}")
    counts["API event list"], _ = _counted(api, "get", f"/api/v1/organizers/{ORGANIZER}/events/", (200,))
    order = json.dumps({"email": "count@example.com", "sales_channel": "web", "positions": [{"item": item}]})
    path = f"/api/v1/organizers/{ORGANIZER}/events/{EVENT}/orders/"
    _counted(api, "post", path, (201,), data=order, content_type="application/json")  # warm
    counts["API order"], _ = _counted(api, "post", path, (201,), data=order, content_type="application/json")
    steps = checkout(Client(**host), item=item, email="checkout@example.com")
    counts.update({f"checkout: {name}": value for name, value in steps})
    counts["checkout (9 requests)"] = sum(value for _, value in steps)
    return {"statements": counts, "checkout_steps": [name for name, _ in steps]}


def checkout(client: Client, *, item: int, email: str) -> list[tuple[str, int]]:
    """pretix's shop checkout, the nine requests a browser without JavaScript sends (the load's
    sequence, bench/visits.py), each with its statements."""
    base = f"/{ORGANIZER}/{EVENT}/"
    steps: list[tuple[str, int]] = []

    def step(name: str, method: str, path: str, expect: tuple[int, ...], **extra) -> object:
        count, response = _counted(client, method, path, expect, **extra)
        steps.append((name, count))
        return response

    step("GET event", "get", base, (200,))
    added = step("POST cart/add", "post", f"{base}cart/add", (302,), data={f"item_{item}": "1"})
    step("GET event (cart)", "get", added["Location"], (200,))
    started = step("GET checkout/start", "get", f"{base}checkout/start", (302,))
    step("GET checkout/questions/", "get", started["Location"], (200,))
    answered = step("POST e-mail", "post", f"{base}checkout/questions/", (302,), data={"email": email})
    step("GET checkout/confirm/", "get", answered["Location"], (200,))
    placed = step("POST confirm", "post", f"{base}checkout/confirm/", (302,), data={})
    step("GET order page", "get", placed["Location"], (200,))
    return steps


COMMANDS = {"seed": seed, "check": check, "statements": statements}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench/pretix_side.py")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("seed").add_argument("--capacity", type=int, required=True)
    checked = commands.add_parser("check")
    checked.add_argument("--organizer", default=ORGANIZER)
    checked.add_argument("--event", default=EVENT)
    counted = commands.add_parser("statements")
    counted.add_argument("--host", required=True)
    counted.add_argument("--token", required=True)
    args = parser.parse_args(argv)
    result = COMMANDS[args.command](args)
    sys.stdout.write("\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
