"""One row per action, and the one way to perform it.

Every tool-named use case (and every organiser action) is an `Action` row below: its name (which is
also the tool's, the use case's, the Activity row's and, with dashes, the page route's), the use
case, the input and output serializers, the scope a personal access token needs, whether the person
confirms it and the sentence they confirm, and what a page tells them afterwards. `perform` is what
pages, REST views, tool calls, MCP and the admin all run: it checks who may call (the token, its
scope), the write rate and the input, calls the use case, writes the call's one Activity row
(refusals included; a write's in the write's own transaction) and hands back the result, the body or
the envelope.

Who acts and through which channel is known where the call enters (`Caller`), so the use cases take
neither a request nor a mode.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.http import HttpRequest
from django.utils import formats, timezone, translation
from django.utils.translation import gettext_lazy as _
from rest_framework.serializers import Serializer

from core.envelope import error_envelope, error_headers
from core.errors import DomainError, InsufficientScope, TemporaryFailure
from core.inputs import validated_input
from core.throttling import check_write_rate
from core.visitors import SYSTEM, Mode, Visitor
from events.contract import (
    AnswersInput,
    AnswersOutput,
    AttendeeRefInput,
    AttendeesOutput,
    BankRowInput,
    BankRowOutput,
    CancelOutput,
    CheckInInput,
    CheckInOutput,
    DecisionOutput,
    EventDetailsOutput,
    EventEditInput,
    EventRefInput,
    EventSearchInput,
    ExpiryOutput,
    FindAttendeeInput,
    LeaveWaitlistOutput,
    NoInput,
    NotificationRefInput,
    PaymentDecisionOutput,
    PaymentRefInput,
    PaymentReportInput,
    PaymentReportOutput,
    RefundInput,
    RegistrationInput,
    RegistrationOutput,
    RegistrationRefInput,
    ResendTicketOutput,
    SaveOutput,
    SearchOutput,
    SessionSavesInput,
    StaffAnswersInput,
    StaffAnswersOutput,
    StaffInput,
    StaffRemovalInput,
    UndoCheckInOutput,
    UnsaveOutput,
    WaitlistOutput,
)

from . import activity, payment_methods, policies, selectors
from .choices import PaymentMethod
from .errors import EventsTokenRequired
from .models import PUBLIC_ID_PATTERN
from .scopes import (
    CHECKIN_WRITE,
    PAYMENTS_WRITE,
    READ,
    REGISTRATIONS_MANAGE,
    REGISTRATIONS_WRITE,
    SAVED_WRITE,
)
from .services import (
    approval,
    calendar,
    door,
    organiser,
    payments,
    registrations,
    reminders,
    saves,
    staff,
    waitlist,
)

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


@dataclass(frozen=True)
class Messages:
    """What a page tells the person after the action: `done`, or `again` when it changed nothing."""

    done: StrOrPromise
    again: StrOrPromise


#: A consequential action's preview: the sentence the person confirms, or None when there is nothing
#: to confirm (the call would change nothing) and the action simply runs. Raises what the call would.
Preview = Callable[[Visitor, dict[str, Any]], str | None]


@dataclass(frozen=True)
class Action:
    name: str
    use_case: Callable[..., Any]
    input: type[Serializer]
    output: type[Serializer] | None
    #: What a personal access token needs; None: no token may (the organisers' actions).
    scope: str | None
    consequential: bool = False
    preview: Preview | None = None
    messages: Messages | None = None
    #: An anonymous visitor may do it: their session gets a visitor token first (saves).
    anonymous_token: bool = False
    #: Whether the REST answer is 201 Created for this result (else 200).
    created: Callable[[Any], bool] | None = None
    #: It changes nothing, though its scope is not `events:read` (the door's list of attendees).
    read_only: bool = False
    #: The page route a person's button posts to, under `events/<event_id>/` (its URL name is the
    #: action's, dashed: `save-event`); `events/urls.py` makes the route from it, served by one page
    #: view for every such row and, where a WebMCP tool calls it, one tool-call view.
    page: str | None = None
    #: The page a post without `confirm=yes` answers first, asking the person (works without JavaScript).
    confirm_page: str | None = None
    #: A write's first read, made before `perform` opens the write's transaction, on the use case's
    #: arguments: it refuses what a read taken without a lock can refuse, so that refusal costs no
    #: transaction, and what it answers reaches the use case as `read_first` (read once). For the
    #: row "rush attempts/s ÷ API search" (bench/README.md): a transaction opened and rolled back was
    #: 0.85 of a refused attempt's 4.3 ms.
    read_first: Callable[..., Any] | None = None

    @property
    def url_name(self) -> str:
        """The page route's name: the action's, dashed."""
        return self.name.replace("_", "-")

    @property
    def writes(self) -> bool:
        return self.scope != READ and not self.read_only


@dataclass(frozen=True)
class Caller:
    """Who calls and through which channel, as the interface the call entered by knows it."""

    visitor: Visitor
    channel: Mode
    #: A personal access token's scopes; None: no token (a session, or nobody), where the use cases decide.
    scopes: frozenset[str] | None = None
    #: MCP has no session to sign in to: acting for a person needs a token.
    token_only: bool = False
    #: The request whose client the write rate counts (API and tool calls); None: not rate-limited.
    rate_request: HttpRequest | Any | None = None
    #: The connected agent that holds the caller's OAuth token ("Claude (claude.ai)"); "" for none.
    client: str = ""
    #: What the request said it was (`X-Client-Mode`), recorded beside the channel, never taken for it.
    claimed: str = ""


@dataclass
class Performed:
    """What one call came to: the use case's result, a preview to confirm, or a refusal."""

    action: Action
    caller: Caller
    arguments: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    error: DomainError | None = None
    preview: str | None = None

    @property
    def outcome(self) -> str:
        if self.error is not None:
            return self.error.reason
        return activity.outcome_of(self.result)

    @property
    def status(self) -> int:
        """The HTTP status a program gets."""
        if self.error is not None:
            return self.error.http_status
        created = self.action.created
        return 201 if created is not None and created(self.result) else 200

    @property
    def headers(self) -> dict[str, str]:
        return error_headers(self.error) if self.error is not None else {}

    def body(self, *, state_version: int | None = None) -> dict[str, Any]:
        """The answer's JSON body: the output, the preview's stateVersion or the envelope. A read's
        output and every envelope carry the visitor's current stateVersion (`state_version` when the
        caller has read it already)."""
        if self.error is not None:
            version = state_version if state_version is not None else _current_version(self.caller.visitor)
            return error_envelope(self.error, state_version=version)
        if self.preview is not None:
            return {"state_version": self._version(state_version)}
        assert self.action.output is not None, f"{self.action.name} has no output serializer"
        if self.action.writes:
            return dict(self.action.output(self.result).data)
        context = {"state_version": self._version(state_version)}
        return dict(self.action.output(self.result, context=context).data)

    def _version(self, known: int | None) -> int:
        return known if known is not None else selectors.state_version(visitor=self.caller.visitor)


def perform(
    action: Action,
    caller: Caller,
    data: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
    *,
    input: type[Serializer] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Performed:
    """Perform `action` for `caller` on `data` (the caller's input, or a function that reads it; what
    else the request held is the interface's to refuse in it, `core.inputs.nothing_but`).

    In order: a token-only channel needs an account, a token needs the action's scope, a write keeps
    within the write rate, `data` is read and valid for `input` (the row's own input by default; a
    tool's may be narrower, the API's names its keys by `source=`). `options` are the interface's own
    arguments for the use case (a page size), never the caller's. Exactly one Activity row is
    written: a write's that succeeded inside the write's own transaction, which `perform` opens (so
    the change and its record commit together); a read's or a refusal's after the call. None for the
    write rate (a flood must not turn into rows) or an outage.
    """
    return _performed(action, caller, data, input=input, options=options)


def preview_first(
    action: Action,
    caller: Caller,
    data: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
    *,
    input: type[Serializer] | None = None,
    final: bool = True,
) -> Performed:
    """A consequential call the person has not confirmed yet (MCP): as `perform`, but it stops at the
    row's preview, the sentence they confirm (a call the preview finds nothing to confirm in runs).
    `final=False`: a refusal here is not the call's answer (the person declined, or the confirmation
    was stale), so it writes no row."""
    return _performed(action, caller, data, input=input, confirmed=False, final=final)


def _performed(
    action: Action,
    caller: Caller,
    data: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
    *,
    input: type[Serializer] | None = None,
    options: Mapping[str, Any] | None = None,
    confirmed: bool = True,
    final: bool = True,
) -> Performed:
    performed = Performed(action=action, caller=caller)
    names_event = "event_id" in (input or action.input)._declared_fields
    raw_event_id = data.get("event_id") if names_event and isinstance(data, Mapping) else None
    try:
        if action.writes and caller.token_only and caller.visitor.user is None:
            raise EventsTokenRequired(extra={"scope": action.scope or ""})
        if caller.scopes is not None and action.scope not in caller.scopes:
            raise InsufficientScope(extra={"scope": action.scope or ""})
        if action.writes and caller.rate_request is not None:
            check_write_rate(caller.rate_request)
        given = data() if callable(data) else data
        if names_event and isinstance(given, Mapping):
            raw_event_id = given.get("event_id")
        performed.arguments = validated_input(input or action.input, given)
        if not confirmed and action.preview is not None:
            performed.preview = action.preview(caller.visitor, performed.arguments)
            if performed.preview is not None:
                return performed
        arguments = {"visitor": caller.visitor, **performed.arguments, **(options or {})}
        if action.writes:
            if action.read_first is not None:
                arguments["read_first"] = action.read_first(**arguments)
            with transaction.atomic():
                performed.result = in_transaction(action.use_case)(**arguments)
                _record(performed, raw_event_id)
        else:
            performed.result = action.use_case(**arguments)
    except TemporaryFailure as error:
        performed.error = error
        return performed
    except DomainError as error:
        performed.error = error
        if not final:
            return performed
    if performed.error is None and action.writes:
        activity.written()
    else:
        activity.record(**_row(performed, raw_event_id))
    return performed


def _record(performed: Performed, raw_event_id: Any) -> None:
    """A write's record, in its transaction: one row, or one per change a batch made (its result's
    `recorded`: the event of each, as the payment sweep's expired registrations name them)."""
    each = getattr(performed.result, "recorded", None)
    if not each:
        activity.record_write(**_row(performed, raw_event_id))
        return
    row = _row(performed, raw_event_id)
    activity.record_writes(rows=[{**row, "event": event} for event in each])


def _row(performed: Performed, raw_event_id: Any) -> dict[str, Any]:
    """The call's Activity row: its event is the result's, else the id the caller named if well formed."""
    event = getattr(performed.result, "event", None)
    well_formed = isinstance(raw_event_id, str) and re.fullmatch(PUBLIC_ID_PATTERN, raw_event_id)
    return {
        "action": performed.action.name,
        "mode": performed.caller.channel,
        "outcome": performed.outcome,
        "visitor": performed.caller.visitor,
        "event": event.pk if event is not None else (raw_event_id if well_formed else None),
        "client": performed.caller.client,
        "claimed_mode": performed.caller.claimed,
    }


def in_transaction(use_case: Callable[..., Any]) -> Callable[..., Any]:
    """What `perform` calls inside the transaction it opens for a write: the use case without its own
    `atomic` (`core.transactions.atomic_use_case`), which there would only be a savepoint. A use case
    that opens its transaction another way is called as it is (its transaction is then the savepoint).
    tests/events/test_activity_writes.py checks every writing row is called bare."""
    return getattr(use_case, "inside_transaction", use_case)


def _current_version(visitor: Visitor) -> int | None:
    """The visitor's stateVersion for an envelope, or None when it cannot be read: the envelope of one
    error must not raise a second."""
    try:
        return selectors.state_version(visitor=visitor)
    except Exception:
        return None


# ── Previews of the consequential actions ──────────────────────────────────────────────────────


def _when_and_who(visitor: Visitor, details: selectors.EventDetails) -> tuple[str, str]:
    with translation.override("en"):  # the sentence is English, as the tools' own words are
        when = formats.date_format(timezone.localtime(details.event.starts_at), "DATETIME_FORMAT")
    return when, visitor.user.get_username() if visitor.user else ""


def registration_preview(visitor: Visitor, arguments: dict[str, Any]) -> str | None:
    """Nothing to confirm when already registered (the use case says so); otherwise what the use case
    would refuse is refused now, else the sentence."""
    details = selectors.get_event_details(visitor=visitor, event_id=arguments["event_id"])
    if details.is_registered:
        return None
    facts = details.visitor_facts(signed_in=True)
    now = timezone.now()
    policies.may_register(policies.EventFacts.of(details.event), facts, now=now).enforce()
    _, spec = registrations.answers_and_ticket_type(
        details.event, answers=arguments.get("answers"), ticket_type=arguments.get("ticket_type"), now=now
    )
    when, who = _when_and_who(visitor, details)
    paying = ""
    if not spec.is_free:
        method = payment_methods.choose(arguments.get("payment_method"), at_door=details.event.at_door)
        if method.method == PaymentMethod.AT_DOOR:
            paying = f" TWD {spec.price:,} is paid at the door."
        else:
            method.start(amount=spec.price, last_payment_at=details.event.last_payment_at(), now=now)
            paying = (
                f" TWD {spec.price:,} is to be paid by bank transfer; the seat is held until the payment's "
                "deadline, and the registration is confirmed once the organisers receive the money."
            )
    if details.event.requires_approval:
        approval = "The organisers approve each registration."
        return f"Ask to register {who} for “{details.event.title}” ({when})? {approval}{paying}"
    return f"Register {who} for “{details.event.title}” ({when})?{paying}"


def cancellation_preview(visitor: Visitor, arguments: dict[str, Any]) -> str | None:
    """Nothing to confirm without a registration (the use case answers that); otherwise as above."""
    details = selectors.get_event_details(visitor=visitor, event_id=arguments["event_id"])
    if not details.is_registered:
        return None
    facts = details.visitor_facts(signed_in=True)
    policies.may_cancel(policies.EventFacts.of(details.event), facts, now=timezone.now()).enforce()
    when, who = _when_and_who(visitor, details)
    return f"Cancel {who}'s registration for “{details.event.title}” ({when})?"


def check_in_preview(visitor: Visitor, arguments: dict[str, Any]) -> str | None:
    """Who would be let in, for the staff member to confirm (an agent's check-in waits for their press);
    a scan (a ticket) is what the staff member did themselves, so it runs at once. Refuses what the
    use case would: not staff, an unknown attendee."""
    if arguments.get("ticket"):
        return None
    event = door.event_for_staff(visitor, arguments["event_id"])
    attendee = door.attendee_by_id(event, arguments["attendee_id"])
    return f"Check in {attendee.name} ({attendee.email}) at “{event.title}”?"


def confirm_payment_preview(visitor: Visitor, arguments: dict[str, Any]) -> str | None:
    """Whose payment, of how much, the manager confirms (an agent's call waits for their yes).
    Refuses what the use case would: not a manager, an unknown attendee."""
    event = door.event_for_staff(visitor, arguments["event_id"], allowed=policies.may_handle_payments)
    attendee = door.attendee_by_id(event, arguments["attendee_id"])
    amount = f"TWD {attendee.amount:,}"
    return f"Confirm that {attendee.name} ({attendee.email}) paid {amount} for “{event.title}”?"


# ── The rows ───────────────────────────────────────────────────────────────────────────────────


def _rows(*rows: Action) -> dict[str, Action]:
    """The table by name; a name used twice fails at import, as the tool registry does."""
    table: dict[str, Action] = {}
    for row in rows:
        if row.name in table:
            raise ValueError(f"Two actions are named {row.name}")
        if row.name != row.use_case.__name__:
            raise ValueError(f"Action {row.name} runs {row.use_case.__name__}: one name per action")
        table[row.name] = row
    return table


ACTIONS = _rows(
    Action("search_events", selectors.search_events, EventSearchInput, SearchOutput, READ),
    Action("get_event_details", selectors.get_event_details, EventRefInput, EventDetailsOutput, READ),
    Action(
        "save_event",
        saves.save_event,
        EventRefInput,
        SaveOutput,
        SAVED_WRITE,
        messages=Messages(
            done=_("Saved. You can find it under My events."),
            again=_("This event was already in your saved events."),
        ),
        anonymous_token=True,
        created=lambda result: not result.already_saved,
        page="save/",
    ),
    Action(
        "unsave_event",
        saves.unsave_event,
        EventRefInput,
        UnsaveOutput,
        SAVED_WRITE,
        messages=Messages(
            done=_("Removed from your saved events."), again=_("Removed from your saved events.")
        ),
        page="unsave/",
    ),
    Action(
        "register_event",
        registrations.register_event,
        RegistrationInput,
        RegistrationOutput,
        REGISTRATIONS_WRITE,
        consequential=True,
        preview=registration_preview,
        messages=Messages(
            done=_("You are registered. A confirmation e-mail is on its way."),
            again=_("You were already registered for this event."),
        ),
        created=lambda result: result.created,
        page="register/",
        read_first=registrations.register_event_read_first,
    ),
    Action(
        "update_registration_answers",
        registrations.update_registration_answers,
        AnswersInput,
        AnswersOutput,
        REGISTRATIONS_WRITE,
        messages=Messages(done=_("Your answers are saved."), again=_("Your answers were already these.")),
        page="answers/",
    ),
    Action(
        "cancel_registration",
        registrations.cancel_registration,
        EventRefInput,
        CancelOutput,
        REGISTRATIONS_WRITE,
        consequential=True,
        preview=cancellation_preview,
        messages=Messages(
            done=_("Your registration is cancelled. Your seat is free for someone else."),
            again=_("This registration was already cancelled."),
        ),
        page="cancel/",
        confirm_page="events/cancel_confirm.html",
    ),
    Action(
        "join_waitlist",
        waitlist.join_waitlist,
        EventRefInput,
        WaitlistOutput,
        REGISTRATIONS_WRITE,
        messages=Messages(
            done=_("You are on the waiting list. We will e-mail you if a seat frees up."),
            again=_("You were already on the waiting list."),
        ),
        created=lambda result: not result.already_waiting,
        page="waitlist/join/",
    ),
    Action(
        "leave_waitlist",
        waitlist.leave_waitlist,
        EventRefInput,
        LeaveWaitlistOutput,
        REGISTRATIONS_WRITE,
        messages=Messages(
            done=_("You have left the waiting list."), again=_("You were not on the waiting list.")
        ),
        page="waitlist/leave/",
    ),
    Action(
        "resend_ticket",
        door.resend_ticket,
        EventRefInput,
        ResendTicketOutput,
        REGISTRATIONS_WRITE,
        messages=Messages(
            done=_("Your ticket is on its way to your e-mail address."),
            again=_("Your ticket is on its way to your e-mail address."),
        ),
        page="ticket/resend/",
    ),
    # The door: the event's door staff and managers (policies.may_check_in), and the scope for a token.
    Action(
        "find_attendee",
        door.find_attendee,
        FindAttendeeInput,
        AttendeesOutput,
        CHECKIN_WRITE,
        read_only=True,
    ),
    Action(
        "check_in_attendee",
        door.check_in_attendee,
        CheckInInput,
        CheckInOutput,
        CHECKIN_WRITE,
        consequential=True,
        preview=check_in_preview,
        messages=Messages(done=_("Admitted."), again=_("Already checked in.")),
        created=lambda result: result.admitted,
    ),
    Action(
        "undo_check_in",
        door.undo_check_in,
        AttendeeRefInput,
        UndoCheckInOutput,
        CHECKIN_WRITE,
        messages=Messages(done=_("Check-in undone."), again=_("This person was not checked in.")),
    ),
    # The organisers' actions (the admin): no token may call them.
    Action("publish_event", organiser.publish_event, EventRefInput, None, None),
    Action("unpublish_event", organiser.unpublish_event, EventRefInput, None, None),
    Action("cancel_event", organiser.cancel_event, EventRefInput, None, None),
    Action("offer_free_seats", organiser.offer_free_seats, EventRefInput, None, None),
    Action(
        "cancel_attendee_registration",
        organiser.cancel_attendee_registration,
        RegistrationRefInput,
        None,
        None,
    ),
    Action("edit_event", organiser.edit_event, EventEditInput, None, None),
    Action("resend_notification", organiser.resend_notification, NotificationRefInput, None, None),
    # The team (the admin's team inline, `manage.py add_event_staff`): superusers and the operator.
    Action("add_event_staff", staff.add_event_staff, StaffInput, None, None),
    Action("remove_event_staff", staff.remove_event_staff, StaffRemovalInput, None, None),
    # A person's own calendar address (the button on My events); no token may.
    Action("reset_calendar_feed", calendar.reset_calendar_feed, NoInput, None, None),
    # The event's managers on its registrations, in the admin and the API (a session, or a token with
    # `registrations:manage`): approval (an event that requires it), and their own questions' answers.
    Action(
        "approve_registration",
        approval.approve_registration,
        RegistrationRefInput,
        DecisionOutput,
        REGISTRATIONS_MANAGE,
    ),
    Action(
        "decline_registration",
        approval.decline_registration,
        RegistrationRefInput,
        DecisionOutput,
        REGISTRATIONS_MANAGE,
    ),
    Action(
        "update_staff_answers",
        registrations.update_staff_answers,
        StaffAnswersInput,
        StaffAnswersOutput,
        REGISTRATIONS_MANAGE,
    ),
    # The sign-in: the anonymous session's saves join the account (`accounts.signals`); no token may.
    Action("merge_saved_events", saves.merge_saved_events, SessionSavesInput, None, None),
    # The worker's own work, performed by the declared system actor (`system_caller`): reminders due.
    # (Its waiting-list sweeps perform `offer_free_seats`.)
    Action("send_reminders", reminders.send_reminders, EventRefInput, None, None),
    # Payments. The person reports their transfer on their own payment page (no token, no tool: the
    # account digits are theirs); an event's managers confirm payments (admin, API, and a tool for
    # their agent, which they confirm) and record refunds; the bank statement's rows and the sweep are
    # applied by the declared system actor (or a superuser; a statement of one event by its managers).
    Action(
        "report_payment",
        payments.report_payment,
        PaymentReportInput,
        PaymentReportOutput,
        None,
        messages=Messages(
            done=_("Thank you: your transfer is being checked. We will e-mail you your ticket once it is."),
            again=_("You had reported this transfer already; it is being checked."),
        ),
        page="payment/report/",
    ),
    Action(
        "confirm_payment",
        payments.confirm_payment,
        PaymentRefInput,
        PaymentDecisionOutput,
        PAYMENTS_WRITE,
        consequential=True,
        preview=confirm_payment_preview,
    ),
    Action("refund_payment", payments.refund_payment, RefundInput, PaymentDecisionOutput, None),
    Action("expire_payments", payments.expire_payments, NoInput, ExpiryOutput, None),
    Action("apply_bank_row", payments.apply_bank_row, BankRowInput, BankRowOutput, None),
)


# ── The declared system actor, and the writes of other apps' use cases ─────────────────────────


def system_caller(client: str) -> Caller:
    """The site acting on its own (the worker's tasks): the declared system actor `core.visitors.SYSTEM`
    through the channel `system`, the task named as the row's `client`. The rows that allow it say so
    (`offer_free_seats`, `send_reminders`)."""
    return Caller(visitor=SYSTEM, channel=Mode.SYSTEM, client=client)


#: The writes of the domain's rows that are not a row of the table above, each under `recorded_write`
#: with its own Activity row: another app's use case (events knows nothing of accounts), and the
#: admin's question forms (Django's formsets save an event's questions and their options).
DECLARED_WRITES = {
    "delete_account": "accounts.privacy.delete_account: the person's own rows go with their account",
    "clear_expired_personal_data": "accounts.privacy: the retention sweep empties answers and addresses",
    "edit_questions": "events.admin: an event's questions and options (policies.question_change_refusal)",
    "edit_ticket_types": "events.admin: an event's ticket types (a registration keeps its own amount)",
}


@dataclass
class Recorded:
    """What a `recorded_write` block says about its write: the Activity row's outcome and event;
    `changed=False`: it wrote nothing, so no row (a sweep that found nothing to do)."""

    outcome: str = "OK"
    event: int | None = None
    changed: bool = True


@contextmanager
def recorded_write(name: str, caller: Caller) -> Iterator[Recorded]:
    """A declared write path (`DECLARED_WRITES`): the block's writes and its one Activity row commit in
    one transaction, as `perform`'s do; a block that raises leaves neither. For a write of the domain's
    rows that is not an action row; tests/events/test_writes_through_rows.py finds every other write."""
    if name not in DECLARED_WRITES or name in ACTIONS:
        raise ValueError(f"{name} is not a declared write")
    record = Recorded()
    with transaction.atomic():
        yield record
        if record.changed:
            activity.record_write(
                action=name,
                mode=caller.channel,
                outcome=record.outcome,
                visitor=caller.visitor,
                event=record.event,
                client=caller.client,
                claimed_mode=caller.claimed,
            )
    if record.changed:
        activity.written()


def call(name: str, *, visitor: Visitor, channel: Mode | str, **data: Any) -> Any:
    """Perform the action `name` for the site's own code (seeds, evals, the bench, tests): its result,
    or its refusal raised. The row is written as for any other caller."""
    performed = perform(ACTIONS[name], Caller(visitor=visitor, channel=Mode(channel)), data)
    if performed.error is not None:
        raise performed.error
    return performed.result
