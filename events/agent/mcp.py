"""The site's tools over MCP (layer 4): one tool call performs the action row of the tool's name.

`django_webmcp.mcp` speaks the protocol; this module is what a call does here: `events.actions.perform` with
channel `mcp`, the token's scopes and the call's arguments (validated with the tool's input serializer,
the same one the API and the browser use). Reads are open; a write needs an account, reached through a
bearer token (an OAuth token of a connected agent, or a personal access token) with the row's scope. A
call that needs the person and has no token answers HTTP 401, a token without the scope 403, each with
the Bearer challenge that points the client to the person's sign-in (`resource_metadata`).
For a consequential tool not yet confirmed, `preview_first` asks for the
row's preview first: the refusals the use case would give come now, else one sentence for the person.
"""

from __future__ import annotations

from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _
from django_webmcp.mcp import McpAnswer, McpCall, McpForm, McpUrl

from core.envelope import error_headers
from core.errors import AuthRequired, DomainError, InsufficientScope
from core.visitors import Mode, Visitor

from .. import selectors
from ..actions import ACTIONS, Caller, Performed, perform, preview_first
from ..contract import payment_url
from ..errors import AnswersInvalid, EventNotFound
from ..questions import elicitation_property, form_of

#: The refusals of an answer that the person can put right by answering (not an agent's unknown key).
ASKABLE = frozenset({"missing", "must_accept", "invalid", "too_long", "too_short", "too_small", "too_large"})
ASKABLE |= {"too_early", "too_late", "not_an_option"}


def answer(
    call: McpCall,
    *,
    visitor: Visitor,
    scopes: frozenset[str] | None,
    client: str = "",
    resource_metadata: str = "",
) -> McpAnswer:
    """`scopes=None`: no token (anonymous); otherwise the token's scopes. `client`: the connected agent
    holding the token; `resource_metadata`: the URL challenges point to."""
    action = ACTIONS[call.declaration.name]
    caller = Caller(
        visitor=visitor,
        channel=Mode.MCP,
        scopes=scopes,
        token_only=True,
        rate_request=call.request,
        client=client,
    )
    tool_input = call.declaration.input_serializer
    if call.confirmed:
        performed = perform(action, caller, call.arguments, input=tool_input)
    else:
        performed = preview_first(action, caller, call.arguments, input=tool_input, final=call.final)
    error = performed.error
    if error is not None:
        version = selectors.state_version(visitor=visitor)
        status = None
        if isinstance(error, (AuthRequired, InsufficientScope)):
            error.extra.setdefault("scope", action.scope or "")
            status = error.http_status
        headers = error_headers(error, resource_metadata=resource_metadata)
        form = _answers_form(call, error, visitor) if not call.confirmed else None
        body = performed.body(state_version=version)
        return McpAnswer(body, is_error=True, headers=headers, status=status, form=form)
    return McpAnswer(performed.body(), preview=performed.preview or "", url=_payment_page(performed))


def _payment_page(performed: Performed) -> McpUrl | None:
    """A registration just made that waits for its payment: the person's own payment page, which a
    client with URL-mode elicitation asks them to open (the agent never handles the payment)."""
    result = performed.result
    registration = getattr(result, "registration", None)
    if performed.action.name != "register_event" or registration is None or result.already_registered:
        return None
    if not registration.is_pending_payment:
        return None
    when = formats.date_format(timezone.localtime(registration.payment_due_at), "DATETIME_FORMAT")
    message = _(
        "Your seat at “%(title)s” is held until %(when)s. Open your payment page to pay TWD %(amount)s "
        "(a bank transfer with your reference)."
    ) % {"title": registration.event.title, "when": when, "amount": f"{registration.amount:,}"}
    return McpUrl(url=payment_url(registration.event), message=message)


def _answers_form(call: McpCall, error: DomainError, visitor: Visitor) -> McpForm | None:
    """The questions the person must still answer (shown ones only, in their language), when every
    problem is one they can put right: a client with form elicitation asks them with the confirmation;
    the dependants an answer reveals come in the next round."""
    if not isinstance(error, AnswersInvalid):
        return None
    problems = error.extra.get("fields", {})
    codes = {key.removeprefix("answers."): entries[0]["code"] for key, entries in problems.items()}
    if not codes or not set(codes.values()) <= ASKABLE:
        return None
    try:
        details = selectors.get_event_details(visitor=visitor, event_id=call.arguments.get("event_id", ""))
    except (EventNotFound, DomainError):
        return None
    language = translation.get_language()
    asked = [q for q in form_of(details.event.question_form) if q.identifier in codes and not q.staff_only]
    if not asked:
        return None
    title = details.event.title
    return McpForm(
        argument="answers",
        message=_("To register for “%(title)s”, please answer the organisers' questions.") % {"title": title},
        properties={q.identifier: elicitation_property(q, language) for q in asked},
        required=tuple(q.identifier for q in asked),
        confirm_title=_("Yes, register me"),
    )
