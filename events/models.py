"""The domain's tables (layer 1). Rules the database can hold are constraints here, not only forms."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import FullResultSet, ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import BooleanField, Count, Expression, F, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.visitors import Mode

from .choices import (
    ACTIVE_WAITLIST,
    CHOICE_KINDS,
    HOLDING_SEAT,
    OWED,
    PARENT_KINDS,
    BankRowState,
    EventStatus,
    Level,
    Location,
    NotificationKind,
    NotificationStatus,
    PaidVia,
    PaymentMethod,
    PaymentStatus,
    Price,
    QuestionKind,
    RegistrationStatus,
    StaffRole,
    WaitlistStatus,
)
from .policies import (
    EventFacts,
    VisitorFacts,
    may_register,
    option_deletion_refusal,
    question_change_refusal,
)

MAX_OFFER_HOURS = 7 * 24
PUBLIC_ID_PATTERN = r"^evt-[a-z0-9]+(?:-[a-z0-9]+)*$"
public_id_validator = RegexValidator(
    PUBLIC_ID_PATTERN, _("An event id is 'evt-' followed by lowercase letters, digits and hyphens.")
)


class EventQuerySet(models.QuerySet["Event"]):
    def published(self) -> EventQuerySet:
        return self.filter(status=EventStatus.PUBLISHED)

    def public(self) -> EventQuerySet:
        """Events a visitor may open: published or cancelled (a cancelled page says so)."""
        return self.filter(status__in=[EventStatus.PUBLISHED, EventStatus.CANCELLED])

    def upcoming(self, now=None) -> EventQuerySet:
        return self.filter(starts_at__gt=now or timezone.now())

    def past(self, now=None) -> EventQuerySet:
        return self.filter(starts_at__lte=now or timezone.now())

    def matching(self, text: str) -> EventQuerySet:
        """Case-insensitive match in title or summary; icontains works for CJK on SQLite and PostgreSQL.

        The LIKEs are the exact check. Beside them, `BigramsCover` lets PostgreSQL find a word of two
        characters through an index (trigram indexes serve the longer ones), with the same answers."""
        if not text:
            return self
        return self.filter(BigramsCover(text), Q(title__icontains=text) | Q(summary__icontains=text))

    def with_seats(self) -> EventQuerySet:
        """Annotate `confirmed_count` (registrations holding a seat: confirmed, or waiting for the
        organisers' approval), `held_count` (seats held by waiting-list offers) and
        `seats_left` (None when unlimited) in the same query.

        Correlated subqueries rather than a join with GROUP BY: the database counts seats only for
        the rows it returns, so a page of 10 events stays 10 lookups however many events match
        (measured by `make bench`, figure "scale").
        """
        here = OuterRef("pk")
        return self.annotate(
            confirmed_count=count_rows(Registration.objects.filter(event=here, status__in=HOLDING_SEAT)),
            held_count=count_rows(WaitlistEntry.objects.filter(event=here, status=WaitlistStatus.OFFERED)),
        ).annotate(seats_left=F("capacity") - F("confirmed_count") - F("held_count"))


class BigramsCover(Expression):
    """On PostgreSQL, for a word of two characters (folded by the same `UPPER` as the LIKEs): the word is
    one of the event's `keyword_bigrams`, the character pairs of its `UPPER(title)` and `UPPER(summary)`
    (a generated column with a GIN index, migration 0012) — the words the trigram indexes cannot serve.
    It follows from the word being in the title or the summary, so beside their LIKEs it changes no
    answer. For any other length `events_keyword_probe` is NULL and the planner drops the condition.
    Elsewhere it is no condition at all (`FullResultSet`)."""

    conditional = True
    output_field = BooleanField()

    def __init__(self, word: str) -> None:
        super().__init__()
        self.row: Any = F("pk")  # resolved, it names the table's alias in this statement (U0 in a subquery)
        self.word: Any = Value(word)

    def get_source_expressions(self) -> list:
        return [self.row, self.word]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        self.row, self.word = exprs

    def as_sql(self, compiler, connection, **extra_context):
        raise FullResultSet  # no bigram column here: the LIKEs alone decide

    def as_postgresql(self, compiler, connection, **extra_context):
        table = compiler.quote_name(self.row.alias)
        word, params = compiler.compile(self.word)
        probe = f"events_keyword_probe(UPPER({word}))"
        return f"({probe} IS NULL OR {table}.keyword_bigrams @> {probe})", (*params, *params)


def count_rows(rows: models.QuerySet) -> Coalesce:
    """A correlated COUNT of `rows` (one event's rows, filtered by an OuterRef) as an integer: 0 for none."""
    counted = rows.order_by().values("event").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=models.IntegerField()), 0)


class SeatsNotCounted(RuntimeError):
    """An event's seats were asked for but not read with it (`EventQuerySet.with_seats`). A RuntimeError,
    not an AttributeError, so a template cannot silently swallow it."""


class Event(models.Model):
    public_id = models.CharField(
        _("public id"),
        max_length=80,
        unique=True,
        validators=[public_id_validator],
        help_text=_("Opaque id used in URLs and tools, e.g. evt-webmcp-intro. Never reused."),
    )
    title = models.CharField(_("title"), max_length=200)
    summary = models.CharField(_("summary"), max_length=300)
    description = models.TextField(_("description"), blank=True)
    starts_at = models.DateTimeField(_("starts at"), db_index=True)
    ends_at = models.DateTimeField(_("ends at"))
    location = models.CharField(_("location"), max_length=20, choices=Location.choices)
    venue = models.CharField(_("venue"), max_length=200, blank=True)
    price = models.CharField(_("price"), max_length=10, choices=Price.choices, default=Price.FREE)
    price_amount = models.DecimalField(_("amount"), max_digits=10, decimal_places=0, null=True, blank=True)
    currency = models.CharField(_("currency"), max_length=3, blank=True)
    level = models.CharField(_("level"), max_length=20, choices=Level.choices)
    capacity = models.PositiveIntegerField(
        _("capacity"), null=True, blank=True, help_text=_("Empty means unlimited.")
    )
    status = models.CharField(
        _("status"), max_length=20, choices=EventStatus.choices, default=EventStatus.DRAFT
    )
    offer_hours = models.PositiveSmallIntegerField(
        _("offer held for (hours)"),
        default=24,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_OFFER_HOURS)],
        help_text=_(
            "How long a seat offered from the waiting list is held (1 hour to 7 days, never past the start)."
        ),
    )
    #: Confirmed plus held seats, kept by the seat ledger (events/services/ledger.py) in the transaction
    #: of every change that takes or frees one, so a seat is taken by one conditional UPDATE of this
    #: row. `with_seats()` stays the truth: a registration always reads both, and a counter that
    #: disagrees (rows written some other way: a bulk load, a cascade) is recounted, never trusted.
    seats_taken = models.PositiveIntegerField(_("seats taken"), default=0, editable=False)
    requires_approval = models.BooleanField(
        _("requires approval"),
        default=False,
        help_text=_("Each registration waits (holding its seat) until a manager approves or declines it."),
    )
    answers_close_at = models.DateTimeField(
        _("answers can be changed until"),
        null=True,
        blank=True,
        help_text=_("Empty: until the event starts. Set it to close changes to the answers earlier."),
    )
    #: The event's registration questions as every reader needs them (events/questions.py), kept from
    #: the `Question` and `QuestionOption` rows whenever they change (events/signals.py). In the event's
    #: own row so that a registration reads its questions in the statement that reads its seats: the
    #: write keeps within its seven statements whatever the number of questions.
    question_form = models.JSONField(_("questions as published"), default=list, editable=False, blank=True)
    #: The event's ticket types as every reader needs them (events/tickets.py), kept from the
    #: `TicketType` rows (events/signals.py) as `question_form` is: a registration reads its type's price
    #: in the statement that reads its seats. Empty: one implicit type at the event's price.
    ticket_form = models.JSONField(_("ticket types as published"), default=list, editable=False, blank=True)
    payment_code = models.CharField(
        _("payment code"),
        max_length=8,
        blank=True,
        validators=[
            RegexValidator(
                r"^[A-Z][A-Z0-9]{1,7}$", _("2 to 8 capital letters or digits, starting with a letter.")
            )
        ],
        help_text=_("Printed before each payment reference, e.g. WEBMCP. Empty: taken from the event's id."),
    )
    payment_closes_at = models.DateTimeField(
        _("last payment time"),
        null=True,
        blank=True,
        help_text=_("Transfers are due by then at the latest. Empty: one day before the start."),
    )
    at_door = models.BooleanField(
        _("offers paying at the door"),
        default=False,
        help_text=_("A person may register now and pay at the door; the check-in records the payment."),
    )
    pending_may_pay_at_door = models.BooleanField(
        _("unpaid transfers may pay at the door"),
        default=False,
        help_text=_("People still waiting for their transfer to be confirmed may pay at the door instead."),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    objects = EventQuerySet.as_manager()

    class Meta:
        ordering = ["starts_at", "id"]
        verbose_name = _("event")
        verbose_name_plural = _("events")
        indexes = [
            models.Index(fields=["status", "starts_at"], name="event_status_start"),
            models.Index(fields=["status", "location", "price", "level", "starts_at"], name="event_filters"),
            # The newest change, read by every API search for its ETag (selectors.search_revision).
            models.Index(fields=["updated_at"], name="event_updated"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(public_id__startswith="evt-"), name="event_public_id_prefix"),
            models.CheckConstraint(
                condition=Q(ends_at__gt=F("starts_at")),
                name="event_ends_after_start",
                violation_error_message=_("The event must end after it starts."),
            ),
            models.CheckConstraint(
                condition=(
                    Q(price=Price.FREE, price_amount__isnull=True, currency="")
                    | Q(price=Price.PAID, price_amount__isnull=False, price_amount__gt=0) & ~Q(currency="")
                ),
                name="event_price_amount_matches_kind",
                violation_error_message=_(
                    "A paid event needs a positive amount and a currency; a free one has none."
                ),
            ),
            models.CheckConstraint(
                condition=Q(capacity__isnull=True) | Q(capacity__gte=1),
                name="event_capacity_positive",
                violation_error_message=_("Capacity is at least 1; leave it empty for unlimited."),
            ),
            models.CheckConstraint(condition=Q(location__in=Location.values), name="event_location_valid"),
            models.CheckConstraint(condition=Q(level__in=Level.values), name="event_level_valid"),
            models.CheckConstraint(condition=Q(price__in=Price.values), name="event_price_valid"),
            models.CheckConstraint(condition=Q(status__in=EventStatus.values), name="event_status_valid"),
            models.CheckConstraint(
                condition=Q(offer_hours__gte=1, offer_hours__lte=MAX_OFFER_HOURS),
                name="event_offer_hours_range",
                violation_error_message=_("An offer is held between 1 hour and 7 days."),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.public_id})"

    def save(self, **kwargs: Any) -> None:
        """A save of the whole row (the admin's form) leaves `seats_taken` alone: written back as it was
        read, it would forget a seat taken meanwhile, and the next one would be sold twice."""
        if not self._state.adding and kwargs.get("update_fields") is None and not kwargs.get("force_insert"):
            kwargs["update_fields"] = [
                field.name
                for field in self._meta.concrete_fields
                if not field.primary_key and field.name != "seats_taken"
            ]
        super().save(**kwargs)

    @property
    def is_published(self) -> bool:
        return self.status == EventStatus.PUBLISHED

    @property
    def is_cancelled(self) -> bool:
        return self.status == EventStatus.CANCELLED

    def clean(self) -> None:
        super().clean()
        if (
            self._state.adding
            and self.public_id
            and RetiredEventId.objects.filter(public_id=self.public_id).exists()
        ):
            raise ValidationError(
                {"public_id": _("This id belonged to a deleted event and cannot be reused.")}
            )

    def has_started(self, now=None) -> bool:
        return self.starts_at <= (now or timezone.now())

    def _counted_facts(self) -> EventFacts:
        """`EventFacts.of(self)`, its seats counted by `with_seats()`.

        Never counted here: a template asking `is_full` of an event read without its seats would run
        two queries per event behind the page's back, so it fails instead (`SeatsNotCounted`)."""
        if getattr(self, "confirmed_count", None) is None and self.capacity is not None:
            raise SeatsNotCounted(f"{self.public_id}: read it with Event.objects.with_seats()")
        return EventFacts.of(self)

    @property
    def is_full(self) -> bool:
        return self._counted_facts().is_full

    @property
    def reference_code(self) -> str:
        """What each payment reference of this event is printed after (`payment_code`, else its id's
        letters and digits, upper case, at most eight)."""
        if self.payment_code:
            return self.payment_code
        letters = "".join(ch for ch in self.public_id.removeprefix("evt-").upper() if ch.isalnum())
        return (letters or "EVT")[:8]

    def last_payment_at(self) -> datetime:
        """When transfers are due at the latest: `payment_closes_at`, else one day before the start."""
        return self.payment_closes_at or self.starts_at - timedelta(days=1)

    @property
    def registration_open(self) -> bool:
        """Whether a new registration could succeed now (the use case asks again under a row lock)."""
        return may_register(self._counted_facts(), VisitorFacts(signed_in=True), now=timezone.now()).allowed


class RetiredEventId(models.Model):
    """Public ids of deleted events, kept so that an id is never given to another event."""

    public_id = models.CharField(max_length=80, unique=True)
    retired_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("retired event id")
        verbose_name_plural = _("retired event ids")

    def __str__(self) -> str:
        return self.public_id


class SavedEvent(models.Model):
    """An event saved by an account, or by an anonymous visitor until they sign in.

    `visitor_token` is a random token kept in the anonymous visitor's session data. It is not the
    session key, which Django rotates at sign-in, so saves can still be found and merged then.
    """

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="saves", verbose_name=_("event"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="saved_events",
        verbose_name=_("user"),
    )
    visitor_token = models.CharField(_("visitor token"), max_length=40, blank=True, db_index=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("saved event")
        verbose_name_plural = _("saved events")
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False, visitor_token="")
                | Q(user__isnull=True) & ~Q(visitor_token=""),
                name="saved_event_one_owner",
            ),
            models.UniqueConstraint(
                fields=["user", "event"], condition=Q(user__isnull=False), name="saved_event_unique_user"
            ),
            models.UniqueConstraint(
                fields=["visitor_token", "event"],
                condition=~Q(visitor_token=""),
                name="saved_event_unique_token",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event.public_id} saved by {self.user_id or self.visitor_token}"


class Registration(models.Model):
    """A person's seat at an event, and their ticket. The ticket's `ticket_code` is a credential (160
    random bits): shown to its holder (QR code, e-mail) and read at the door, never put in a tool
    result, an Activity row, a log line or a logged URL, nor shown in the admin. A cancelled
    registration's code admits nobody (the door says "cancelled"); registering again issues a new
    code, so the old one is unknown from then on. In the registration's own row, so a registration
    costs no statement more for its ticket."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="registrations",
        verbose_name=_("user"),
    )
    event = models.ForeignKey(
        Event, on_delete=models.PROTECT, related_name="registrations", verbose_name=_("event")
    )
    status = models.CharField(
        _("status"), max_length=20, choices=RegistrationStatus.choices, default=RegistrationStatus.CONFIRMED
    )
    # NULL, not "": many registrations may have none (cancelled before tickets existed), and unique.
    ticket_code = models.CharField(max_length=40, unique=True, null=True, editable=False)  # noqa: DJ001
    ticket_issued_at = models.DateTimeField(_("ticket issued"), null=True, blank=True)
    #: The person's answers to the event's questions, keyed by the question's identifier: each
    #: `{"value": …, "label": …}`, the label being the question's (English) label when answered
    #: (`events.questions.Answer`). In the registration's own row: a registration with answers is one
    #: INSERT, however many questions the event asks; the retention empties it (RETENTION_ANSWERS_DAYS).
    answers = models.JSONField(_("answers"), default=dict, blank=True)
    #: The ticket type (its identifier in `Event.ticket_form`); "" for an event of one implicit type.
    ticket_type = models.CharField(_("ticket type"), max_length=40, blank=True, default="")
    # ── its money, in its own row (a paid registration is one INSERT, as a free one is): integer TWD.
    # Every change is one transition under this row's lock (events/services/payments.py), recorded by
    # the action's Activity row. A registration that ever carried money is never re-activated: a new
    # registration keeps the old one's record.
    amount = models.PositiveIntegerField(_("amount due (TWD)"), default=0)
    payment_method = models.CharField(
        _("payment method"), max_length=20, choices=PaymentMethod.choices, blank=True, default=""
    )
    payment_status = models.CharField(
        _("payment"), max_length=20, choices=PaymentStatus.choices, default=PaymentStatus.NONE
    )
    #: Six characters without look-alikes, printed after the event's code (`payment_reference_text`).
    payment_reference = models.CharField(
        _("payment reference"), max_length=12, unique=True, null=True, blank=True, editable=False
    )
    payment_due_at = models.DateTimeField(_("pay by"), null=True, blank=True)
    #: What the person reported of their transfer. The digits are a credential: shown to them and to
    #: the event's managers only, never in a tool result, an Activity row or a log line; blanked
    #: RETENTION_PAYMENTS_DAYS after the event.
    reported_last5 = models.CharField(_("reported account digits"), max_length=5, blank=True, default="")
    reported_paid_on = models.DateField(_("reported transfer date"), null=True, blank=True)
    reported_at = models.DateTimeField(_("reported"), null=True, blank=True)
    paid_amount = models.PositiveIntegerField(_("paid (TWD)"), default=0)
    paid_at = models.DateTimeField(_("paid"), null=True, blank=True)
    paid_via = models.CharField(_("paid via"), max_length=20, choices=PaidVia.choices, blank=True, default="")
    refunded_amount = models.PositiveIntegerField(_("refunded (TWD)"), default=0)
    refunded_at = models.DateTimeField(_("refunded"), null=True, blank=True)
    refunded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("refunded by"),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("registration")
        verbose_name_plural = _("registrations")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "event"],
                condition=Q(status__in=HOLDING_SEAT),
                name="registration_one_active_per_user_event",
            ),
            models.CheckConstraint(
                condition=Q(status__in=RegistrationStatus.values), name="registration_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(payment_status__in=PaymentStatus.values), name="registration_payment_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(refunded_amount__lte=F("paid_amount")), name="registration_refund_at_most_paid"
            ),
            models.CheckConstraint(
                condition=~Q(status=RegistrationStatus.PENDING_PAYMENT) | Q(payment_due_at__isnull=False),
                name="registration_pending_payment_has_deadline",
            ),
        ]
        indexes = [
            models.Index(fields=["event", "status"], name="registration_event_status"),
            # The payment sweep: pending ones past their deadline, oldest first.
            models.Index(
                fields=["payment_due_at"],
                condition=Q(status="pending_payment"),
                name="registration_payment_due",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.event.public_id} ({self.get_status_display()})"

    @property
    def is_active(self) -> bool:
        """It holds a seat: confirmed, or waiting for the organisers' approval."""
        return self.status in HOLDING_SEAT

    @property
    def is_pending(self) -> bool:
        return self.status == RegistrationStatus.PENDING_APPROVAL

    @property
    def is_pending_payment(self) -> bool:
        return self.status == RegistrationStatus.PENDING_PAYMENT

    @property
    def owes(self) -> bool:
        """Money is still owed: a transfer awaited or being checked, or due at the door."""
        return self.payment_status in OWED

    @property
    def refund_due(self) -> bool:
        """Paid, no longer holding its seat (or its event cancelled), not refunded yet."""
        no_seat = not self.is_active or self.event.is_cancelled
        return self.payment_status == PaymentStatus.PAID and no_seat and self.refunded_amount == 0

    @property
    def payment_reference_text(self) -> str:
        """The reference as printed for the person and their bank: the event's code, a dash, the code."""
        if not self.payment_reference:
            return ""
        return f"{self.event.reference_code}-{self.payment_reference}"


MAX_QUESTIONS = 20  # per event
MAX_OPTIONS = 50  # per question
LABEL_MAX_LENGTH = 200
TEXT_ANSWER_MAX_LENGTH = 1000
IDENTIFIER_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
identifier_validator = RegexValidator(
    IDENTIFIER_PATTERN,
    _("An identifier is a lowercase letter, then up to 39 lowercase letters, digits or underscores."),
)


class Question(models.Model):
    """One question an event asks when a person registers. Programs and agents know it by its
    `identifier` (stable: what answers are keyed by), people by its label. A question may be shown
    only when one earlier question's answer is one of `show_if_values` (one level: the parent is a
    choice, yes-or-no or consent question that has no condition itself). The rules over the whole
    form (how many, conditions, what an answer changes) are checked by `clean` and the admin's
    formset; what a reader needs is `Event.question_form`."""

    event = models.ForeignKey(
        Event, on_delete=models.CASCADE, related_name="questions", verbose_name=_("event")
    )
    position = models.PositiveSmallIntegerField(_("position"), default=0)
    identifier = models.CharField(
        _("identifier"),
        max_length=40,
        validators=[identifier_validator],
        help_text=_("What programs and agents use for this question, e.g. dietary_need. Never shown."),
    )
    label_en = models.CharField(_("label (English)"), max_length=LABEL_MAX_LENGTH)
    label_zh_hant = models.CharField(_("label (Traditional Chinese)"), max_length=LABEL_MAX_LENGTH)
    help_en = models.CharField(_("help (English)"), max_length=LABEL_MAX_LENGTH, blank=True)
    help_zh_hant = models.CharField(_("help (Traditional Chinese)"), max_length=LABEL_MAX_LENGTH, blank=True)
    kind = models.CharField(_("kind"), max_length=20, choices=QuestionKind.choices)
    required = models.BooleanField(_("required"), default=False)
    min_length = models.PositiveSmallIntegerField(
        _("shortest answer"), null=True, blank=True, validators=[MaxValueValidator(TEXT_ANSWER_MAX_LENGTH)]
    )
    max_length = models.PositiveSmallIntegerField(
        _("longest answer"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(TEXT_ANSWER_MAX_LENGTH)],
        help_text=_("Characters, for text answers; at most 1,000."),
    )
    min_value = models.DecimalField(
        _("smallest number"), max_digits=12, decimal_places=2, null=True, blank=True
    )
    max_value = models.DecimalField(
        _("largest number"), max_digits=12, decimal_places=2, null=True, blank=True
    )
    min_date = models.DateField(_("earliest date"), null=True, blank=True)
    max_date = models.DateField(_("latest date"), null=True, blank=True)
    show_if = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="dependants",
        verbose_name=_("show only when"),
        help_text=_("Ask this question only when that question's answer is one of the values below."),
    )
    show_if_values = models.JSONField(
        _("…is one of"),
        default=list,
        blank=True,
        help_text=_('Option identifiers, or true / false for a yes-or-no question, e.g. ["yes", "maybe"].'),
    )
    staff_only = models.BooleanField(
        _("organisers only"), default=False, help_text=_("Filled in and seen by the organisers only.")
    )
    show_at_door = models.BooleanField(_("show at the door"), default=False)

    class Meta:
        ordering = ["event", "position", "id"]
        verbose_name = _("registration question")
        verbose_name_plural = _("registration questions")
        constraints = [
            models.UniqueConstraint(fields=["event", "identifier"], name="question_identifier_once"),
            models.CheckConstraint(condition=Q(kind__in=QuestionKind.values), name="question_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.identifier} · {self.label_en}"

    @property
    def is_choice(self) -> bool:
        return self.kind in CHOICE_KINDS

    def clean(self) -> None:
        """The question's own rules; those over the whole form are `Question.check_form`'s."""
        super().clean()
        errors: dict[str, Any] = {}
        if self.min_length is not None and self.max_length is not None and self.min_length > self.max_length:
            errors["min_length"] = _("The shortest answer cannot be longer than the longest.")
        if self.min_value is not None and self.max_value is not None and self.min_value > self.max_value:
            errors["min_value"] = _("The smallest number cannot be larger than the largest.")
        if self.min_date is not None and self.max_date is not None and self.min_date > self.max_date:
            errors["min_date"] = _("The earliest date cannot be after the latest.")
        if self.show_if_id is not None:
            if problem := self._condition_problem():
                errors["show_if"] = problem
        elif self.show_if_values:
            errors["show_if_values"] = _("Values are only for a question shown on a condition.")
        if not self._state.adding and (refusal := self.change_refusal()):
            errors["kind"] = refusal
        if errors:
            raise ValidationError(errors)

    def _condition_problem(self) -> Any:
        parent = self.show_if
        if parent is None:
            return None
        if parent.pk == self.pk or parent.event_id != self.event_id:
            return _("A condition names another question of the same event.")
        if parent.kind not in PARENT_KINDS:
            return _("A condition depends on a choice, yes-or-no or consent question.")
        if parent.show_if_id is not None:
            return _("That question has a condition itself: conditions are one level deep.")
        if not self._state.adding and self.dependants.exists():
            return _("Other questions depend on this one, so it cannot have a condition itself.")
        values = self.show_if_values
        if not isinstance(values, list) or not values:
            return _("Name the values that show this question.")
        if parent.kind in CHOICE_KINDS:
            known = set(parent.options.values_list("identifier", flat=True))
            if not all(isinstance(value, str) and value in known for value in values):
                return _("Each value must be one of that question's option identifiers.")
        elif not all(isinstance(value, bool) for value in values):
            return _("For a yes-or-no or consent question the values are true or false.")
        return None

    def change_refusal(self, *, deleted: bool = False) -> Any:
        """Why this change (its kind, as it is now set) or its deletion is refused, or None: the facts
        for `policies.question_change_refusal`, the one rule."""
        if self._state.adding:
            return None
        before = Question.objects.filter(pk=self.pk).values_list("kind", flat=True).first()
        kind_changed = before is not None and before != self.kind
        if not (deleted or kind_changed):
            return None
        refusal = question_change_refusal(
            answered=self.has_answers(), kind_changed=kind_changed, deleted=deleted
        )
        return refusal % {"question": self.identifier} if refusal is not None and deleted else refusal

    def has_answers(self) -> bool:
        """Whether anyone has answered it (any registration, whatever its status)."""
        return Registration.objects.filter(event_id=self.event_id, answers__has_key=self.identifier).exists()

    def answered_values(self) -> set[str]:
        """The option identifiers someone has chosen: those options can be hidden, never deleted."""
        chosen: set[Any] = set()
        rows = Registration.objects.filter(event_id=self.event_id, answers__has_key=self.identifier)
        for answers in rows.values_list("answers", flat=True):
            value = (answers.get(self.identifier) or {}).get("value")
            chosen.update(value if isinstance(value, list) else [value])
        return {value for value in chosen if isinstance(value, str)}


class QuestionOption(models.Model):
    """One answer a choice question offers. `hidden`: no longer offered (an answered option is hidden,
    never deleted, so the answers that chose it keep their meaning)."""

    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, related_name="options", verbose_name=_("question")
    )
    position = models.PositiveSmallIntegerField(_("position"), default=0)
    identifier = models.CharField(_("identifier"), max_length=40, validators=[identifier_validator])
    label_en = models.CharField(_("label (English)"), max_length=LABEL_MAX_LENGTH)
    label_zh_hant = models.CharField(_("label (Traditional Chinese)"), max_length=LABEL_MAX_LENGTH)
    hidden = models.BooleanField(_("hidden"), default=False, help_text=_("No longer offered."))

    class Meta:
        ordering = ["question", "position", "id"]
        verbose_name = _("option")
        verbose_name_plural = _("options")
        constraints = [
            models.UniqueConstraint(
                fields=["question", "identifier"], name="question_option_identifier_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.identifier} · {self.label_en}"

    def deletion_refusal(self, chosen: set[str] | None = None) -> Any:
        """Why deleting this option is refused, or None (`policies.option_deletion_refusal`); `chosen`:
        its question's `answered_values()`, when the caller has read them for several options."""
        if self._state.adding:
            return None
        if chosen is None:
            chosen = self.question.answered_values()
        refusal = option_deletion_refusal(chosen=self.identifier in chosen)
        return refusal % {"option": self.identifier} if refusal is not None else None


def question_form(event: Event) -> list[dict[str, Any]]:
    """The event's questions as `Event.question_form` keeps them: plain data, in their order, each
    with its options (labels in both languages; events/questions.py reads it)."""
    questions = list(
        Question.objects.filter(event=event).select_related("show_if").prefetch_related("options")
    )
    return [
        {
            "identifier": question.identifier,
            "kind": question.kind,
            "required": question.required,
            "label": {"en": question.label_en, "zh-hant": question.label_zh_hant},
            "help": {"en": question.help_en, "zh-hant": question.help_zh_hant},
            "minLength": question.min_length,
            "maxLength": question.max_length,
            "minimum": _number(question.min_value),
            "maximum": _number(question.max_value),
            "minDate": question.min_date.isoformat() if question.min_date else None,
            "maxDate": question.max_date.isoformat() if question.max_date else None,
            "showIf": (
                {"question": question.show_if.identifier, "values": list(question.show_if_values)}
                if question.show_if is not None
                else None
            ),
            "staffOnly": question.staff_only,
            "showAtDoor": question.show_at_door,
            "options": [
                {
                    "identifier": option.identifier,
                    "label": {"en": option.label_en, "zh-hant": option.label_zh_hant},
                    "hidden": option.hidden,
                }
                for option in question.options.all()
            ],
        }
        for question in questions
    ]


def _number(value: Any) -> int | float | None:
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def refresh_question_form(event_id: int) -> None:
    """Write the event's `question_form` from its rows (after any change to a question or option)."""
    event = Event.objects.filter(pk=event_id).first()
    if event is not None:
        Event.objects.filter(pk=event_id).update(question_form=question_form(event))


class TicketType(models.Model):
    """One kind of ticket an event sells: its price (integer TWD; 0 is free), an optional sales window
    (an early bird's) and an optional cap of its own. Every type draws on the event's one capacity.
    Programs and agents know it by its `identifier`, people by its name; readers use
    `Event.ticket_form` (events/tickets.py), kept from these rows by events/signals.py."""

    event = models.ForeignKey(
        Event, on_delete=models.CASCADE, related_name="ticket_types", verbose_name=_("event")
    )
    position = models.PositiveSmallIntegerField(_("position"), default=0)
    identifier = models.CharField(
        _("identifier"),
        max_length=40,
        validators=[identifier_validator],
        help_text=_("What programs and agents use for this type, e.g. early_bird. Never shown."),
    )
    name_en = models.CharField(_("name (English)"), max_length=100)
    name_zh_hant = models.CharField(_("name (Traditional Chinese)"), max_length=100)
    price = models.PositiveIntegerField(_("price (TWD)"), default=0, help_text=_("0 is a free ticket."))
    sales_start = models.DateTimeField(_("on sale from"), null=True, blank=True)
    sales_end = models.DateTimeField(_("on sale until"), null=True, blank=True)
    cap = models.PositiveIntegerField(
        _("at most"), null=True, blank=True, help_text=_("Empty: only the event's capacity limits it.")
    )

    class Meta:
        ordering = ["event", "position", "id"]
        verbose_name = _("ticket type")
        verbose_name_plural = _("ticket types")
        constraints = [
            models.UniqueConstraint(fields=["event", "identifier"], name="ticket_type_identifier_once"),
            models.CheckConstraint(
                condition=Q(cap__isnull=True) | Q(cap__gte=1), name="ticket_type_cap_positive"
            ),
            models.CheckConstraint(
                condition=Q(sales_start__isnull=True)
                | Q(sales_end__isnull=True)
                | Q(sales_end__gt=F("sales_start")),
                name="ticket_type_sales_window",
                violation_error_message=_("Sales must end after they start."),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.identifier} · TWD {self.price:,}"


def ticket_form(event_id: int) -> list[dict[str, Any]]:
    """The event's ticket types as `Event.ticket_form` keeps them: plain data, in their order."""
    return [
        {
            "identifier": row.identifier,
            "name": {"en": row.name_en, "zh-hant": row.name_zh_hant},
            "price": row.price,
            "salesStart": row.sales_start.isoformat() if row.sales_start else None,
            "salesEnd": row.sales_end.isoformat() if row.sales_end else None,
            "cap": row.cap,
        }
        for row in TicketType.objects.filter(event_id=event_id)
    ]


def refresh_ticket_form(event_id: int) -> None:
    """Write the event's `ticket_form` from its rows (after any change to a type), and its price
    summary with it: `paid` with the lowest paid price when any type costs money, else `free` (the
    search's `price` filter: free means every type is free)."""
    form = ticket_form(event_id)
    if not form:
        Event.objects.filter(pk=event_id).update(ticket_form=[])
        return
    prices = [entry["price"] for entry in form if entry["price"] > 0]
    summary = (
        {"price": Price.PAID, "price_amount": min(prices), "currency": "TWD"}
        if prices
        else {"price": Price.FREE, "price_amount": None, "currency": ""}
    )
    Event.objects.filter(pk=event_id).update(ticket_form=form, **summary)


class EventStaff(models.Model):
    """Who helps run an event, and as what (`StaffRole`). What each role may do is in the policies."""

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="staff", verbose_name=_("event"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="event_roles", verbose_name=_("user")
    )
    role = models.CharField(_("role"), max_length=10, choices=StaffRole.choices)
    added_at = models.DateTimeField(_("added"), default=timezone.now)

    class Meta:
        verbose_name = _("event staff member")
        verbose_name_plural = _("event staff")
        constraints = [
            models.UniqueConstraint(fields=["event", "user"], name="event_staff_once"),
            models.CheckConstraint(condition=Q(role__in=StaffRole.values), name="event_staff_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.get_role_display()} · {self.event.public_id}"


class CheckIn(models.Model):
    """A person let in at the door: at most one standing check-in per registration (a constraint, under
    the registration's row lock). An undo keeps the row (`undone_at`) for the organiser's record. Both
    times are kept: the device's scan time, which may be wrong, and the server's; a device time in the
    future is flagged, never refused."""

    registration = models.ForeignKey(
        Registration, on_delete=models.CASCADE, related_name="check_ins", verbose_name=_("registration")
    )
    staff = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="check_ins_done",
        verbose_name=_("checked in by"),
    )
    scan_id = models.UUIDField(_("scan id"), null=True, blank=True, unique=True)
    scanned_at = models.DateTimeField(_("scanned (device)"), null=True, blank=True)
    checked_in_at = models.DateTimeField(_("checked in"), default=timezone.now)
    scan_time_in_future = models.BooleanField(_("device clock ahead"), default=False)
    undone_at = models.DateTimeField(_("undone"), null=True, blank=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("undone by"),
    )

    class Meta:
        ordering = ["-checked_in_at", "-id"]
        verbose_name = _("check-in")
        verbose_name_plural = _("check-ins")
        constraints = [
            models.UniqueConstraint(
                fields=["registration"],
                condition=Q(undone_at__isnull=True),
                name="check_in_once_per_registration",
            )
        ]

    def __str__(self) -> str:
        return f"check-in of registration #{self.registration_id} at {self.checked_in_at:%H:%M}"


class WaitlistEntry(models.Model):
    """A person waiting for a seat of a full event, first come, first served.

    While `offered`, a seat is held for them until `expires_at` (it counts against capacity).
    Every other status but `waiting` ends the entry; joining again starts a new one at the back.
    """

    event = models.ForeignKey(
        Event, on_delete=models.CASCADE, related_name="waitlist", verbose_name=_("event")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="waitlist", verbose_name=_("user")
    )
    status = models.CharField(
        _("status"), max_length=20, choices=WaitlistStatus.choices, default=WaitlistStatus.WAITING
    )
    joined_at = models.DateTimeField(_("joined"), default=timezone.now)
    offered_at = models.DateTimeField(_("offered"), null=True, blank=True)
    expires_at = models.DateTimeField(_("offer expires"), null=True, blank=True)
    ended_at = models.DateTimeField(_("ended"), null=True, blank=True)

    class Meta:
        ordering = ["joined_at", "id"]
        verbose_name = _("waiting-list entry")
        verbose_name_plural = _("waiting list")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "event"],
                condition=Q(status__in=ACTIVE_WAITLIST),
                name="waitlist_one_active_per_user_event",
            ),
            models.CheckConstraint(
                condition=Q(status__in=WaitlistStatus.values), name="waitlist_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(status=WaitlistStatus.OFFERED) | Q(expires_at__isnull=False),
                name="waitlist_offer_expires",
            ),
        ]
        indexes = [models.Index(fields=["event", "status", "joined_at"], name="waitlist_queue")]

    def __str__(self) -> str:
        return _("%(person)s waits for %(event)s (%(status)s)") % {
            "person": self.user,
            "event": self.event.public_id,
            "status": self.get_status_display(),
        }

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_WAITLIST

    @property
    def has_offer(self) -> bool:
        return self.status == WaitlistStatus.OFFERED


class Notification(models.Model):
    """An e-mail and its attempts: queued in the same transaction as the change that causes it (the
    task is the outbox; events/mail/outbox.py), written with the change's time by the worker's first attempt,
    retried with backoff, and never sent twice for the same `key`."""

    kind = models.CharField(_("kind"), max_length=30, choices=NotificationKind.choices)
    key = models.CharField(_("idempotency key"), max_length=200, unique=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notifications",
        verbose_name=_("user"),
    )
    email = models.EmailField(_("to"))
    event = models.ForeignKey(
        Event, on_delete=models.CASCADE, related_name="notifications", verbose_name=_("event")
    )
    registration = models.ForeignKey(
        Registration,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("registration"),
    )
    entry = models.ForeignKey(
        WaitlistEntry,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("waiting-list entry"),
    )
    language = models.CharField(_("language"), max_length=10)
    status = models.CharField(
        _("status"), max_length=10, choices=NotificationStatus.choices, default=NotificationStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    last_error = models.TextField(_("last error"), blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    claimed_at = models.DateTimeField(_("last attempt"), null=True, blank=True)
    sent_at = models.DateTimeField(_("sent"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("notification")
        verbose_name_plural = _("notifications")
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=NotificationKind.values), name="notification_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=NotificationStatus.values), name="notification_status_valid"
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="notification_status")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} → {self.email} ({self.get_status_display()})"


class VisitorState(models.Model):
    """The per-visitor `stateVersion`: it rises once per real change to saves or registrations."""

    visitor_key = models.CharField(max_length=60, unique=True)
    version = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = _("visitor state")
        verbose_name_plural = _("visitor states")

    def __str__(self) -> str:
        return f"{self.visitor_key}: {self.version}"


class Activity(models.Model):
    """One row per use-case call: what, by which mode, with which outcome. Read-only in the admin."""

    action = models.CharField(_("action"), max_length=40, db_index=True)
    mode = models.CharField(_("mode"), max_length=10, choices=Mode.choices)
    outcome = models.CharField(_("outcome"), max_length=40)
    event = models.ForeignKey(
        Event, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("event")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("user"),
    )
    visitor_token = models.CharField(_("visitor token"), max_length=40, blank=True)
    #: The connected agent that held the caller's OAuth token ("Claude (claude.ai)"); "" for none.
    client = models.CharField(_("client"), max_length=100, blank=True, default="")
    #: What the request said it was (`X-Client-Mode`), kept as the caller's claim: the row's `mode` is
    #: the channel the call entered by, fixed there. "" when nothing (known) was said.
    claimed_mode = models.CharField(
        _("claimed mode"), max_length=10, choices=Mode.choices, blank=True, default="", db_default=""
    )
    created_at = models.DateTimeField(_("time"), default=timezone.now, db_index=True)
    #: In its day's `ActivityCount` yet. A write's row is inserted in the write's own transaction, not
    #: counted there (a shared count row in every write would make the writes wait for each other), and
    #: counted soon after by `events.activity.count_waiting`; a batch of rows is counted as it is written.
    counted = models.BooleanField(_("counted in the day's total"), default=True, db_default=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("activity")
        verbose_name_plural = _("activities")
        constraints = [models.CheckConstraint(condition=Q(mode__in=Mode.values), name="activity_mode_valid")]
        # The rows waiting to be counted, found without reading the others.
        indexes = [models.Index(fields=["id"], condition=Q(counted=False), name="activity_uncounted")]

    def __str__(self) -> str:
        return f"{self.action} [{self.mode}] {self.outcome}"


class ActivityCount(models.Model):
    """How many Activity rows a day holds (in the site's TIME_ZONE), by action, mode, outcome and client.

    The agent-readiness dashboard reads these (readiness/figures.py), so its page costs the same at a
    million calls a month as at a thousand: counting the rows themselves grew with them (a 30-day
    window of 500 000 rows took 200–450 ms). A row is added to its count in the transaction that marks
    it `counted` (`events.activity.write_rows`, `count_waiting`), so they always equal counting the
    counted rows, and every row is counted within about `ACTIVITY_FLUSH_SECONDS` of its commit.
    """

    day = models.DateField()
    action = models.CharField(max_length=40)
    mode = models.CharField(max_length=10, choices=Mode.choices)
    outcome = models.CharField(max_length=40)
    client = models.CharField(_("client"), max_length=100, blank=True, default="")
    calls = models.PositiveBigIntegerField()

    class Meta:
        verbose_name = _("activity count")
        verbose_name_plural = _("activity counts")
        constraints = [
            models.UniqueConstraint(
                fields=["day", "mode", "action", "outcome", "client"], name="activity_count_key"
            ),
            models.CheckConstraint(condition=Q(mode__in=Mode.values), name="activity_count_mode_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.action} [{self.mode}] {self.outcome}: {self.calls}"


class CalendarFeed(models.Model):
    """A person's secret calendar address, `/calendar/<token>.ics` (events/web/feeds.py): their registrations
    (and, asked for, their saved events) for a calendar program to subscribe to.

    The token (256 random bits) is a read-only capability to one calendar, like the "secret address" of
    other calendar services: it is kept as it is, so My events can show the address whenever the person
    needs to copy it into another program (a calendar program cannot be given it "once"), as a ticket's
    code is kept. It is never put in an Activity row, a log line (config/settings.py masks the path),
    the admin or `str()`. Resetting it replaces the token; the old address then answers 404.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calendar_feed"
    )
    token = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    class Meta:
        verbose_name = _("calendar feed")
        verbose_name_plural = _("calendar feeds")

    def __str__(self) -> str:
        return f"calendar feed of {self.user_id}"


class BankStatementRow(models.Model):
    """One row of an imported bank statement and what became of it (`state`): applied once, whatever
    the number of imports of its file (`checksum`, unique: over the row's normalised date, amount,
    reference and payer, computed by the statement reader). The payer's name and account digits are
    personal data and a credential: shown to the event's managers only, never in a tool result, an
    Activity row or a log line, and blanked RETENTION_PAYMENTS_DAYS after the event (amounts stay)."""

    checksum = models.CharField(_("checksum"), max_length=64, unique=True)
    event = models.ForeignKey(
        Event, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("event")
    )
    registration = models.ForeignKey(
        Registration,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="bank_rows",
        verbose_name=_("registration"),
    )
    source = models.CharField(_("file"), max_length=200, blank=True)
    line = models.PositiveIntegerField(_("line"), default=0)
    booked_on = models.DateField(_("date"), null=True, blank=True)
    amount = models.IntegerField(_("amount (TWD)"), null=True, blank=True)
    reference = models.CharField(_("reference"), max_length=200, blank=True)
    payer = models.CharField(_("payer"), max_length=200, blank=True)
    account_last5 = models.CharField(_("account digits"), max_length=5, blank=True)
    state = models.CharField(_("state"), max_length=20, choices=BankRowState.choices)
    problem = models.CharField(_("problem"), max_length=200, blank=True)
    imported_at = models.DateTimeField(_("imported"), default=timezone.now)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("imported by"),
    )

    class Meta:
        ordering = ["-imported_at", "line", "id"]
        verbose_name = _("bank statement row")
        verbose_name_plural = _("bank statement rows")
        constraints = [
            models.CheckConstraint(condition=Q(state__in=BankRowState.values), name="bank_row_state_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.source}:{self.line} {self.amount} ({self.get_state_display()})"
