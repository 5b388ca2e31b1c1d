"""The domain's refusals (layer 0): what the events, registrations and waiting lists refuse.

They subclass the site's base refusals (`core.errors`) and carry the envelope fields of
docs/agent-contract.md; use cases raise them.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from core.errors import (
    DomainError,
    InvalidInput,
    InvalidToken,
    NotFound,
    PermissionDenied,
    TemporaryFailure,
    TokenRequired,
)


class CurrentEventMismatch(InvalidInput):
    reason = "CURRENT_EVENT_MISMATCH"
    default_message = "This page is about another event."
    next_action = "Call the tool with {} to act on this page's event, or open the other event's page."


class EventNotFound(NotFound):
    """No public event (published or cancelled) has this id. The site's public objects are its events,
    so a route that does not exist answers this too (settings.ERROR_CLASSES)."""

    reason = "EVENT_NOT_FOUND"
    default_message = "No public event has this id."
    next_action = "Do not guess other ids; search for events and use an id from the results."


class NotOrganiser(PermissionDenied):
    """Organisers' work (and any 403 the site answers on its own, settings.ERROR_CLASSES)."""

    reason = "NOT_ORGANISER"
    default_message = "Only an organiser may do this."


class EventServiceUnavailable(TemporaryFailure):
    """The database is away (settings.ERROR_CLASSES)."""

    reason = "EVENT_SERVICE_UNAVAILABLE"
    person_message = _("The event service is temporarily unavailable. Please try again later.")
    default_message = "The event service is temporarily unavailable."


class EventsTokenRequired(TokenRequired):
    """A write over MCP without a token, with where the person makes one (settings.ERROR_CLASSES)."""

    next_action = (
        "Ask the person to sign in at /accounts/login/, make a personal access token on My events (/me/) "
        "with the scope this tool needs, and give it to you; then call again with it."
    )


class EventsInvalidToken(InvalidToken):
    """A token that is not valid, with where the person makes another (settings.ERROR_CLASSES)."""

    next_action = "Stop and ask the person for a new access token (made on My events)."


class RegistrationNotFound(EventNotFound):
    reason = "REGISTRATION_NOT_FOUND"
    person_message = _("You have no registration for this event.")
    default_message = "You have no registration for this event."
    next_action = "Check the person's registrations before cancelling."


class Conflict(DomainError):
    code = "CONFLICT"
    http_status = 409
    next_action = "Tell the person; ask before doing anything else."


class EventFull(Conflict):
    reason = "EVENT_FULL"
    person_message = _("Sorry, this event is full: there are no seats left.")
    default_message = "This event has no seats left."


class RegistrationClosed(Conflict):
    reason = "REGISTRATION_CLOSED"
    person_message = _("This event has already started, so registrations can no longer be made or cancelled.")
    default_message = "Registration for this event is closed because it has started."


class EventCancelled(Conflict):
    reason = "EVENT_CANCELLED"
    person_message = _("This event has been cancelled.")
    default_message = "This event has been cancelled."


class AlreadyRegistered(Conflict):
    reason = "ALREADY_REGISTERED"
    person_message = _("You are already registered for this event.")
    default_message = "The person is already registered for this event; there is nothing to wait for."
    next_action = "Tell the person they already have a seat."


class SeatsAvailable(Conflict):
    reason = "SEATS_AVAILABLE"
    person_message = _("This event still has free seats: register directly.")
    default_message = "This event has free seats; the waiting list is only for full events."
    next_action = "Offer to register the person with register_event instead (they confirm)."


class WaitlistClosed(Conflict):
    reason = "WAITLIST_CLOSED"
    person_message = _("The event starts soon: no more seats are offered from the waiting list.")
    default_message = "The event starts too soon for the waiting list; a seat that frees is open to anyone."
    next_action = "Tell the person; if get_event_details shows a free seat, they may register."


# ── the door ──────────────────────────────────────────────────────────────────────────────────


class NotEventStaff(PermissionDenied):
    reason = "NOT_EVENT_STAFF"
    person_message = _("Only this event's door staff and managers can check people in.")
    default_message = "Only this event's door staff and managers may do this."
    next_action = "Stop; an organiser can add the person to the event's staff."


class TicketUnknown(NotFound):
    reason = "TICKET_UNKNOWN"
    person_message = _("Unknown ticket: this code is not one of ours.")
    default_message = "No ticket has this code."
    next_action = "Scan again, or find the person by name."


class TicketForAnotherEvent(Conflict):
    reason = "TICKET_OTHER_EVENT"
    person_message = _("Not a ticket for this event.")
    default_message = "This ticket is for another event."
    next_action = "Send the person to the right event."


class TicketCancelled(Conflict):
    reason = "TICKET_CANCELLED"
    person_message = _("Cancelled: this ticket no longer admits anyone.")
    default_message = "This ticket was voided: its registration is cancelled, or a newer ticket replaced it."
    next_action = "Do not admit on this ticket; the person may register again."


class AttendeeNotFound(NotFound):
    reason = "ATTENDEE_NOT_FOUND"
    person_message = _("No registration of this event has that attendee id.")
    default_message = "No registration of this event has that attendee id."
    next_action = "Call find_attendee for the right id."


class UndoTooLate(Conflict):
    reason = "UNDO_NOT_ALLOWED"
    person_message = _("This check-in can no longer be undone here (too long ago, or by someone else).")
    default_message = (
        "Only the staff member who checked the person in, or a manager, may undo it, within minutes."
    )
    next_action = "Ask a manager."


class NoTicket(Conflict):
    reason = "NO_TICKET"
    person_message = _("You have no ticket for this event.")
    default_message = "The person holds no ticket for this event (no confirmed registration)."
    next_action = "Register first; the ticket comes with the confirmation."


# ── registration questions and approval ──────────────────────────────────────────────────────


class AnswersInvalid(InvalidInput):
    """The answers to an event's questions do not fit them: `fields` is keyed `answers.<identifier>`,
    each with its code (`missing`, `invalid`, `too_long`, `not_an_option`, `must_accept`, …)."""

    reason = "ANSWERS_INVALID"
    person_message = _("Please check your answers to the questions below.")
    default_message = "Some answers to the event's questions are missing or not valid."
    next_action = (
        "Ask the person for the answers listed in fields (never invent one), then call again with all "
        "the answers."
    )


class AnswersClosed(Conflict):
    reason = "ANSWERS_CLOSED"
    person_message = _("Answers to this event's questions can no longer be changed.")
    default_message = (
        "The answers can no longer be changed: the event has started or its organisers closed changes."
    )
    next_action = "Tell the person; an organiser can still change them."


class NotPendingApproval(Conflict):
    reason = "NOT_PENDING_APPROVAL"
    person_message = _("This registration is not waiting for approval.")
    default_message = (
        "This registration is not waiting for approval (already approved, declined or cancelled)."
    )
    next_action = "Read the registration again; nothing to decide."


# ── ticket types and payments ─────────────────────────────────────────────────────────────────


class TicketTypeRequired(InvalidInput):
    """The event sells more than one ticket type and the call named none: `ticketTypes` lists the
    identifiers on sale now."""

    reason = "TICKET_TYPE_REQUIRED"
    person_message = _("Please choose a ticket type.")
    default_message = "This event has several ticket types: name one in ticket_type."
    next_action = (
        "Ask the person which ticket type they want (get_event_details lists them with their prices), "
        "then call again with its identifier in ticket_type."
    )


class TicketTypeUnknown(InvalidInput):
    reason = "TICKET_TYPE_UNKNOWN"
    person_message = _("This ticket type is not one of this event's.")
    default_message = "The event has no ticket type with this identifier."
    next_action = "Use an identifier get_event_details lists for this event; do not guess."


class TicketTypeNotOnSale(Conflict):
    reason = "TICKET_TYPE_NOT_ON_SALE"
    person_message = _("This ticket type is not on sale now.")
    default_message = "This ticket type is not on sale now (its sales window is closed or not yet open)."
    next_action = "Tell the person; get_event_details says which types are on sale now."


class TicketTypeSoldOut(Conflict):
    reason = "TICKET_TYPE_SOLD_OUT"
    person_message = _("This ticket type is sold out.")
    default_message = "Every ticket of this type is taken (the event may still have seats of another type)."
    next_action = "Tell the person; offer another ticket type on sale if get_event_details lists one."


class PaymentMethodUnavailable(InvalidInput):
    reason = "PAYMENT_METHOD_UNAVAILABLE"
    person_message = _("This way of paying is not offered for this event.")
    default_message = "This event does not offer this payment method."
    next_action = "Leave payment_method out (a bank transfer), or use one get_event_details lists."


class PaymentClosed(Conflict):
    reason = "PAYMENT_CLOSED"
    person_message = _("Transfers are no longer accepted for this event.")
    default_message = "The event's last payment time has passed: no transfer can be made in time."
    next_action = "Tell the person; if the event offers paying at the door, they may register for that."


class PaymentNotPending(Conflict):
    reason = "PAYMENT_NOT_PENDING"
    person_message = _("No payment is waiting for this registration.")
    default_message = "This registration is not waiting for a payment (paid, free, cancelled or expired)."
    next_action = "Read the registration again; nothing to pay or confirm."


class PaymentExpired(Conflict):
    reason = "PAYMENT_EXPIRED"
    person_message = _("The payment deadline has passed and the seat went to someone else.")
    default_message = "The payment deadline passed and no seat is free now: the money is to be refunded."
    next_action = "Tell the person; an organiser refunds money that came too late."


class PaymentNotRefundable(Conflict):
    reason = "PAYMENT_NOT_REFUNDABLE"
    person_message = _("This registration has no payment to refund.")
    default_message = (
        "Nothing to refund: nothing was paid, it was refunded already, or the registration still holds its "
        "seat (cancel it first, unless the event is cancelled)."
    )
    next_action = "Read the registration again; cancel it first if the refund goes with a cancellation."


class RefundAmountInvalid(InvalidInput):
    reason = "REFUND_AMOUNT_INVALID"
    person_message = _("A refund is between TWD 1 and what was paid.")
    default_message = "A refund is a whole number of TWD, at least 1 and at most what was paid."
    next_action = "Call again with an amount up to the paid amount (or leave it out for all of it)."


class PaymentNotFound(NotFound):
    """No payment of the person's for this event (their own page, their report): another person's
    registration or reference answers this too, so nothing tells whose it is."""

    reason = "PAYMENT_NOT_FOUND"
    person_message = _("You have no payment for this event.")
    default_message = "The person has no registration waiting for or holding a payment for this event."
    next_action = "Check the person's registrations; nothing to pay here."
