"""The site's tools over MCP (layer 4): one tool call, one use case, the API's body or envelope.

`webmcp.mcp` speaks the protocol; this module is what a call does here. It validates the arguments with
the tool's input serializer (the same one the API and the browser use), checks what the caller may do
(reads are open; a write needs an account, reached through a personal access token, with the right
scope), applies the API's write rate, runs the use case of the tool's name with mode `mcp`, and shapes
the answer with the API's output serializer. For a consequential tool, `confirmed=False` asks for a
preview first: the refusals the use case would give come now, else one sentence for the person.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils import formats, timezone, translation

from webmcp.mcp import McpAnswer, McpCall

from . import policies, selectors, services
from .activity import record_refusal
from .api.envelope import error_envelope, error_headers
from .api.inputs import validated_input
from .api.scopes import READ, REGISTRATIONS_WRITE, SAVED_WRITE
from .api.serializers import (
    CancelOutput,
    EventDetailsOutput,
    LeaveWaitlistOutput,
    RegistrationOutput,
    SaveOutput,
    SearchOutput,
    WaitlistOutput,
)
from .api.throttling import check_write_rate
from .choices import Mode
from .errors import DomainError, InsufficientScope, TokenRequired
from .visitors import Visitor


def _read(visitor: Visitor) -> dict[str, int]:
    return {"state_version": selectors.state_version(visitor=visitor)}


def _search(visitor: Visitor, arguments: dict[str, Any]) -> dict[str, Any]:
    result = selectors.search_events(visitor=visitor, mode=Mode.MCP, **arguments)
    return SearchOutput(result, context=_read(visitor)).data


def _details(visitor: Visitor, arguments: dict[str, Any]) -> dict[str, Any]:
    details = selectors.get_event_details(visitor=visitor, mode=Mode.MCP, **arguments)
    return EventDetailsOutput(details, context=_read(visitor)).data


def _write(use_case: Callable[..., Any], output: type) -> Callable[[Visitor, dict[str, Any]], dict[str, Any]]:
    def run(visitor: Visitor, arguments: dict[str, Any]) -> dict[str, Any]:
        return output(use_case(visitor=visitor, mode=Mode.MCP, **arguments)).data

    return run


#: Each tool: the scope it needs and what it does (the use case of the same name).
TOOLS: dict[str, tuple[str, Callable[[Visitor, dict[str, Any]], dict[str, Any]]]] = {
    "search_events": (READ, _search),
    "get_event_details": (READ, _details),
    "save_event": (SAVED_WRITE, _write(services.save_event, SaveOutput)),
    "register_event": (REGISTRATIONS_WRITE, _write(services.register_event, RegistrationOutput)),
    "cancel_registration": (REGISTRATIONS_WRITE, _write(services.cancel_registration, CancelOutput)),
    "join_waitlist": (REGISTRATIONS_WRITE, _write(services.join_waitlist, WaitlistOutput)),
    "leave_waitlist": (REGISTRATIONS_WRITE, _write(services.leave_waitlist, LeaveWaitlistOutput)),
}


def answer(call: McpCall, *, visitor: Visitor, scopes: frozenset[str] | None) -> McpAnswer:
    """`scopes=None`: no token (anonymous); otherwise the token's scopes."""
    name = call.declaration.name
    try:
        scope, run = TOOLS[name]
        if scope != READ and visitor.user is None:
            raise TokenRequired()
        if scopes is not None and scope not in scopes:
            raise InsufficientScope(extra={"scope": scope})
        serializer = call.declaration.input_serializer
        arguments = validated_input(serializer, call.arguments) if serializer is not None else {}
        if scope != READ:
            check_write_rate(call.request)
        if not call.confirmed:
            return _preview(name, visitor, arguments, run)
        return McpAnswer(run(visitor, arguments))
    except DomainError as error:
        if call.final:  # a refusal before the use case ran (or in the preview) is the call's row
            event_id = call.arguments.get("event_id")
            record_refusal(action=name, mode=Mode.MCP, error=error, visitor=visitor, event_id=event_id)
        version = selectors.state_version(visitor=visitor)
        return McpAnswer(
            error_envelope(error, state_version=version), is_error=True, headers=error_headers(error)
        )


def _preview(
    name: str, visitor: Visitor, arguments: dict[str, Any], run: Callable[[Visitor, dict[str, Any]], dict]
) -> McpAnswer:
    """What a consequential call would do, for the person to confirm; what it would refuse, refused now.
    A call that would change nothing (already registered or cancelled) is simply answered."""
    details = selectors.get_event_details(visitor=visitor, mode=None, event_id=arguments["event_id"])
    event, facts, now = details.event, details.visitor_facts(signed_in=True), timezone.now()
    with translation.override("en"):  # the sentence is English, as the tools' own words are
        when = formats.date_format(timezone.localtime(event.starts_at), "DATETIME_FORMAT")
    who = visitor.user.get_username() if visitor.user else ""
    if name == "register_event":
        if details.is_registered:
            return McpAnswer(run(visitor, arguments))
        policies.may_register(event.facts(), facts, now=now).enforce()
        return McpAnswer(_read(visitor), preview=f"Register {who} for “{event.title}” ({when})?")
    if not details.is_registered:  # cancel_registration: nothing to cancel is answered as the use case does
        return McpAnswer(run(visitor, arguments))
    policies.may_cancel(event.facts(), facts, now=now).enforce()
    return McpAnswer(_read(visitor), preview=f"Cancel {who}'s registration for “{event.title}” ({when})?")
