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
    CANCELLED = "cancelled", _("Cancelled")


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
    TICKET = "ticket", _("Ticket sent again")
    WAITLIST_OFFER = "waitlist_offer", _("Seat offered")
    OFFER_EXPIRED = "offer_expired", _("Offer expired")
    EVENT_CANCELLED = "event_cancelled", _("Event cancelled")
    REMINDER = "reminder", _("Reminder")


class NotificationStatus(models.TextChoices):
    PENDING = "pending", _("Waiting to be sent")
    SENDING = "sending", _("Being sent")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")
    SKIPPED = "skipped", _("Not sent: no longer wanted")  # e.g. a reminder after a cancellation


#: The group that gives an event's managers the admin's model permissions; which rows they see is
#: the admin's `EventScopedAdmin`'s. Their team is shown to them, and only superusers change it.
MANAGERS_GROUP = "Event managers"
MANAGER_PERMISSIONS = ["view_event", "change_event", "view_registration", "view_checkin", "view_eventstaff"]
