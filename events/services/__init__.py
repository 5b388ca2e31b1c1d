"""Write use cases (layer 2), one module per subject. Each runs in one transaction and is idempotent;
its call's Activity row is written by `events.actions.perform`, which every interface goes through.

Refusals are typed errors (`events.errors`, `core.errors`); `stateVersion` rises exactly once per real
change and never on a no-op. The use cases are named here, as the one place callers find them.
"""

from .answers import validate_answers
from .approval import DecisionResult, approve_registration, decline_registration
from .common import bump_state_version
from .door import (
    AttendeesResult,
    CheckInResult,
    ResendResult,
    UndoResult,
    check_in_attendee,
    find_attendee,
    resend_ticket,
    undo_check_in,
)
from .organiser import (
    EventStatusResult,
    OfferResult,
    cancel_attendee_registration,
    cancel_event,
    offer_free_seats,
    publish_event,
    unpublish_event,
)
from .registrations import (
    AnswersResult,
    CancelResult,
    RegistrationResult,
    cancel_registration,
    register_event,
    update_registration_answers,
)
from .saves import SaveResult, UnsaveResult, merge_saved_events, save_event, unsave_event
from .waitlist import LeaveWaitlistResult, WaitlistResult, join_waitlist, leave_waitlist, process_waitlists

__all__ = [
    "AnswersResult",
    "AttendeesResult",
    "CancelResult",
    "CheckInResult",
    "DecisionResult",
    "EventStatusResult",
    "LeaveWaitlistResult",
    "OfferResult",
    "RegistrationResult",
    "ResendResult",
    "SaveResult",
    "UndoResult",
    "UnsaveResult",
    "WaitlistResult",
    "approve_registration",
    "bump_state_version",
    "cancel_attendee_registration",
    "cancel_event",
    "cancel_registration",
    "check_in_attendee",
    "decline_registration",
    "find_attendee",
    "join_waitlist",
    "leave_waitlist",
    "merge_saved_events",
    "offer_free_seats",
    "process_waitlists",
    "publish_event",
    "register_event",
    "resend_ticket",
    "save_event",
    "undo_check_in",
    "unpublish_event",
    "unsave_event",
    "update_registration_answers",
    "validate_answers",
]
