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
