"""Enumerations shared by every layer (layer 0: imports nothing of ours).

Values are the words agents and URLs use (`taipei`, `free`, `beginner`), never codes to translate.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Location(models.TextChoices):
    TAIPEI = "taipei", _("Taipei")
    KAOHSIUNG = "kaohsiung", _("Kaohsiung")
    ONLINE = "online", _("Online")


class Price(models.TextChoices):
    FREE = "free", _("Free")
    PAID = "paid", _("Paid")


class Level(models.TextChoices):
    BEGINNER = "beginner", _("Beginner")
    INTERMEDIATE = "intermediate", _("Intermediate")
    ADVANCED = "advanced", _("Advanced")


class EventStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    PUBLISHED = "published", _("Published")
    CANCELLED = "cancelled", _("Cancelled")


class RegistrationStatus(models.TextChoices):
    CONFIRMED = "confirmed", _("Confirmed")
    #: An event that requires approval: the seat is held while its managers decide.
    PENDING_APPROVAL = "pending_approval", _("Waiting for approval")
    #: A paid ticket type: the seat is held until the payment's deadline (`payment_due_at`).
    PENDING_PAYMENT = "pending_payment", _("Waiting for payment")
    CANCELLED = "cancelled", _("Cancelled")
    DECLINED = "declined", _("Declined")
    #: Not paid by its deadline: the seat went back to the pool (the payment sweep).
    EXPIRED = "expired", _("Not paid in time")


#: The statuses that hold a seat (counted against capacity): at most one per person and event.
HOLDING_SEAT = (
    RegistrationStatus.CONFIRMED,
    RegistrationStatus.PENDING_APPROVAL,
    RegistrationStatus.PENDING_PAYMENT,
)


class PaymentStatus(models.TextChoices):
    """Where a registration's money stands (`Registration.payment_status`), the words Taiwanese
    transfer pages use: 待付款, 查帳中, 已付款. Every change is one transition under the
    registration's row lock (events/services/payments.py)."""

    NONE = "none", _("Nothing to pay")
    AWAITING = "awaiting", _("Awaiting payment")
    #: The person reported their transfer (last five digits and date): the organisers check it.
    CHECKING = "checking", _("Being checked")
    #: Confirmed at once; paid at the door (the check-in records it).
    AT_DOOR = "at_door", _("Due at the door")
    PAID = "paid", _("Paid")
    #: Ended without money: expired, or cancelled before paying.
    UNPAID = "unpaid", _("Not paid")
    REFUNDED = "refunded", _("Refunded")


#: Money is owed on the registration (the person may still pay).
OWED = (PaymentStatus.AWAITING, PaymentStatus.CHECKING, PaymentStatus.AT_DOOR)
#: Waiting for a transfer (the sweep expires these after their deadline).
AWAITING_TRANSFER = (PaymentStatus.AWAITING, PaymentStatus.CHECKING)


class PaymentMethod(models.TextChoices):
    """How a paid registration is paid (events/payment_methods.py: one provider each)."""

    BANK_TRANSFER = "bank_transfer", _("Bank transfer")
    AT_DOOR = "at_door", _("Pay at the door")
    #: Confirms without a gateway; enabled only where PAYMENT_METHODS names it (the tests).
    DUMMY = "dummy", _("Test payment")


class PaidVia(models.TextChoices):
    """Who or what confirmed a payment."""

    ORGANISER = "organiser", _("An organiser")
    BANK_STATEMENT = "bank_statement", _("The bank statement")
    DOOR = "door", _("At the door")
    PROCESSOR = "processor", _("The payment processor")


class BankRowState(models.TextChoices):
    """What became of one row of an imported bank statement (`BankStatementRow.state`): every row
    ends in one of these, which the organisers see on the import page and in the admin."""

    MATCHED = "matched", _("Matched: payment confirmed")
    LATE_CONFIRMED = "late_confirmed", _("Late, a seat was free: confirmed again")
    ALREADY_PAID = "already_paid", _("Already paid")
    NO_MATCH = "no_match", _("No match")
    INVALID = "invalid", _("Invalid row")
    LATE = "late", _("Late, no seat free: refund it")
    PARTIAL = "partial", _("Less than due: not confirmed")
    OVERPAID = "overpaid", _("More than due: not confirmed")
    CANCELLED = "cancelled", _("For a cancelled registration: refund it")


class QuestionKind(models.TextChoices):
    """What a registration question asks for; the answer's JSON type follows from it."""

    TEXT = "text", _("Short text")
    LONG_TEXT = "long_text", _("Long text")
    NUMBER = "number", _("Number")
    BOOLEAN = "boolean", _("Yes or no")
    CONSENT = "consent", _("Consent (must be accepted)")
    SINGLE_CHOICE = "single_choice", _("One choice")
    MULTI_CHOICE = "multi_choice", _("Several choices")
    DATE = "date", _("Date")
    EMAIL = "email", _("E-mail address")
    URL = "url", _("Web address")
    PHONE = "phone", _("Phone number")


CHOICE_KINDS = (QuestionKind.SINGLE_CHOICE, QuestionKind.MULTI_CHOICE)
#: The kinds a condition may depend on: their answers are a closed set of values.
PARENT_KINDS = (*CHOICE_KINDS, QuestionKind.BOOLEAN, QuestionKind.CONSENT)


class WaitlistStatus(models.TextChoices):
    """A waiting-list entry is active while waiting or offered; every other status ends it."""

    WAITING = "waiting", _("Waiting")
    OFFERED = "offered", _("Offered a seat")
    CLAIMED = "claimed", _("Registered")
    DECLINED = "declined", _("Declined the offer")
    LEFT = "left", _("Left the list")
    EXPIRED = "expired", _("Offer expired")
    CLOSED = "closed", _("Event cancelled")


ACTIVE_WAITLIST = (WaitlistStatus.WAITING, WaitlistStatus.OFFERED)


class StaffRole(models.TextChoices):
    """A person's part in running one event, besides the superusers who run them all."""

    MANAGER = "manager", _("Manager")  # edits the event, sees and exports its attendees, publishes, cancels
    DOOR = "door", _("Door staff")  # checks people in, nothing else


class NotificationKind(models.TextChoices):
    REGISTRATION_CONFIRMED = "registration_confirmed", _("Registration confirmed")
    REGISTRATION_PENDING = "registration_pending", _("Registration waiting for approval")
    REGISTRATION_APPROVED = "registration_approved", _("Registration approved")
    REGISTRATION_DECLINED = "registration_declined", _("Registration declined")
    TICKET = "ticket", _("Ticket sent again")
    WAITLIST_OFFER = "waitlist_offer", _("Seat offered")
    OFFER_EXPIRED = "offer_expired", _("Offer expired")
    EVENT_CANCELLED = "event_cancelled", _("Event cancelled")
    REMINDER = "reminder", _("Reminder")
    PAYMENT_DUE = "payment_due", _("Payment instructions")
    PAYMENT_REMINDER = "payment_reminder", _("Payment reminder")
    PAYMENT_EXPIRED = "payment_expired", _("Payment deadline passed")
    PAYMENT_CONFIRMED = "payment_confirmed", _("Payment received")


class NotificationStatus(models.TextChoices):
    PENDING = "pending", _("Waiting to be sent")
    SENDING = "sending", _("Being sent")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")
    SKIPPED = "skipped", _("Not sent: no longer wanted")  # e.g. a reminder after a cancellation


#: The group that gives an event's managers the admin's model permissions; which rows they see is
#: the admin's `EventScopedAdmin`'s. Their team is shown to them, and only superusers change it.
MANAGERS_GROUP = "Event managers"
MANAGER_PERMISSIONS = [
    "view_event",
    "change_event",
    "view_registration",
    "view_bankstatementrow",
    "view_checkin",
    "view_eventstaff",
    # The event's registration questions (an inline on its page) and their options.
    *(
        f"{verb}_{model}"
        for model in ("question", "questionoption", "tickettype")
        for verb in ("view", "add", "change", "delete")
    ),
]
