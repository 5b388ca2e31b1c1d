"""Section 1: which tools each kind of page offers, in which state — from the registry and the policies,
the same sources as the pages' manifests (a test compares this table with the pages themselves)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import mcp.types as types
from django.utils.translation import gettext_lazy as _
from django_webmcp.mcp import mcp_tools
from django_webmcp.registry import ToolContext, registry

from events import policies
from events.choices import EventStatus
from events.tools import CHECK_IN, check_in_state, detail_state

NOW = datetime(2030, 6, 1, 10, tzinfo=UTC)  # facts below are relative to it
EXAMPLE_ID = "evt-example"


def _event(**facts: Any) -> policies.EventFacts:
    base: dict[str, Any] = {
        "status": EventStatus.PUBLISHED,
        "starts_at": NOW + timedelta(days=7),
        "capacity": 10,
        "confirmed": 0,
    }
    return policies.EventFacts(**(base | facts))


SIGNED_IN = policies.VisitorFacts(signed_in=True)
DETAIL_STATES: list[tuple[Any, policies.EventFacts, policies.VisitorFacts]] = [
    (_("anonymous"), _event(), policies.VisitorFacts(signed_in=False)),
    (_("signed in"), _event(), SIGNED_IN),
    (_("registered"), _event(confirmed=1), policies.VisitorFacts(signed_in=True, registered=True)),
    (_("full"), _event(capacity=1, confirmed=1), SIGNED_IN),
    (
        _("on the waiting list"),
        _event(capacity=1, confirmed=1),
        policies.VisitorFacts(signed_in=True, waiting=True),
    ),
    (
        _("a seat held for them"),
        _event(capacity=2, confirmed=1, held=1),
        policies.VisitorFacts(signed_in=True, waiting=True, holds_offer=True),
    ),
    (_("cancelled"), _event(status=EventStatus.CANCELLED), SIGNED_IN),
    (_("past"), _event(starts_at=NOW - timedelta(days=1)), SIGNED_IN),
]


@dataclass(frozen=True)
class OfferedTool:
    name: str
    hints: list[str]
    confirmed: bool  # waits for the person's press (WebMCP) / their yes (MCP)


@dataclass(frozen=True)
class PageKind:
    page: Any
    state: Any
    tools: list[OfferedTool]


def _offered(url_name: str, kwargs: dict[str, Any], state: dict[str, Any]) -> list[OfferedTool]:
    context = ToolContext(request=None, url_name=url_name, url_kwargs=kwargs, state=state)
    return [
        OfferedTool(tool.name, sorted(tool.annotations), exposure.confirm)
        for tool, exposure in registry.active_exposures(context)
    ]


def page_kinds() -> list[PageKind]:
    rows = [PageKind(_("Event list"), _("anyone"), _offered("event-list", {}, {}))]
    for label, event, visitor in DETAIL_STATES:
        can = policies.permissions(event, visitor, now=NOW)
        state = detail_state(signed_in=visitor.signed_in, registered=visitor.registered, can=can)
        rows.append(
            PageKind(_("Event page"), label, _offered("event-detail", {"event_id": EXAMPLE_ID}, state))
        )
    rows.append(
        PageKind(
            _("My events"),
            _("a registration that can be cancelled"),
            _offered("me", {}, {"signed_in": True, "cancellable": True}),
        )
    )
    rows.append(PageKind(_("My events"), _("nothing to cancel"), _offered("me", {}, {"signed_in": True})))
    # The door: the page is drawn for the event's door staff and managers; anyone else gets its 403.
    for label, door_staff in ((_("door staff"), True), (_("not door staff (403)"), False)):
        state = {"signed_in": True, **check_in_state(door_staff=door_staff)}
        rows.append(PageKind(_("Check-in page"), label, _offered(CHECK_IN, {"event_id": EXAMPLE_ID}, state)))
    mcp = [_mcp_offered(tool) for tool in mcp_tools()]
    rows.append(PageKind(_("MCP (/mcp)"), _("with a token; reads also without"), mcp))
    return rows


def _mcp_offered(tool: types.Tool) -> OfferedTool:
    hints = tool.annotations or types.ToolAnnotations()
    shown = [
        hint
        for hint, on in (
            ("readOnlyHint", hints.read_only_hint),
            ("destructiveHint", hints.destructive_hint),
            ("idempotentHint", hints.idempotent_hint),
        )
        if on
    ]
    declaration = registry.get(tool.name)
    return OfferedTool(tool.name, shown, bool(declaration and declaration.consequential))
