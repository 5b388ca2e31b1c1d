"""The organisers' screens (layer 4): manage events and registrations, read how the site is used.

The admin edits rows directly, so it only offers what keeps the domain's promises: events are
cancelled rather than deleted (their public ids are never reused or changed), and activity is a
read-only record.

Superusers run every event; an event's managers (`EventStaff`, role manager) run theirs only: they
see and edit those events, their registrations with each attendee's check-in, their check-ins and
their team (`EventScopedAdmin`). A ticket code is a credential: no page here shows it, and no list
may be filtered on it.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, TypedDict, cast

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Sum
from django.forms.models import BaseInlineFormSet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import formats, timezone, translation
from django.utils.functional import lazy
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from core import csvsafe
from core.visitors import Mode

from . import policies
from .actions import ACTIONS, Caller, Performed, perform, recorded_write
from .bank_statements import read_statement
from .choices import (
    HOLDING_SEAT,
    OWED,
    BankRowState,
    EventStatus,
    NotificationStatus,
    PaymentStatus,
    RegistrationStatus,
)
from .contract import bank_row_data, mask_digits
from .forms import answer_fields, answers_from_post
from .models import (
    MAX_OPTIONS,
    MAX_QUESTIONS,
    Activity,
    BankStatementRow,
    CheckIn,
    Event,
    EventQuerySet,
    EventStaff,
    Notification,
    Question,
    QuestionOption,
    Registration,
    SavedEvent,
    TicketType,
    WaitlistEntry,
)
from .questions import form_of, shown_answers

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise, WithAnnotations

    class SeatCounts(TypedDict):
        """What `EventQuerySet.with_seats()` annotates."""

        confirmed_count: int
        seats_left: int | None


def _admin_title() -> str:
    # Read at each page in the person's language, so a changed SITE_NAME (or a test's) is what shows.
    return gettext("%(site)s admin") % {"site": settings.SITE_NAME}


admin.site.site_header = admin.site.site_title = lazy(_admin_title, str)()
admin.site.index_title = _("Events, registrations and activity")

CSV_HEADER = [
    "event id",
    "event title",
    "username",
    "email",
    "registered at",
    "checked in",
    "checked in at",
    "checked in by",
    "status",
    "ticket type",
    "amount (TWD)",
    "payment",
    "payment reference",
    "paid at",
    "paid via",
    "refunded (TWD)",
    "refunded at",
]

# ── Who runs which event: EventStaff rows and the policies ──────────────────────────────────────


def _roles(request: HttpRequest) -> dict[int, str]:
    """The signed-in person's role in each event they help run, read once per request."""
    cached = getattr(request, "_event_roles", None)
    if cached is None:
        cached = dict(EventStaff.objects.filter(user=request.user.pk).values_list("event_id", "role"))
        request._event_roles = cached  # type: ignore[attr-defined]
    return cached


def staff_facts(request: HttpRequest, event_pk: int) -> policies.StaffFacts:
    """The signed-in person's part in the event `event_pk`, for the policies."""
    return policies.StaffFacts(superuser=request.user.is_superuser, role=_roles(request).get(event_pk))


def managed_event_ids(request: HttpRequest) -> frozenset[int] | None:
    """The events the signed-in person may manage (`policies.may_manage_event`); None: every event."""
    if policies.may_manage_event(policies.StaffFacts(superuser=request.user.is_superuser)):
        return None  # allowed whatever their role: they run every event
    return frozenset(pk for pk in _roles(request) if policies.may_manage_event(staff_facts(request, pk)))


class EventScopedAdmin(admin.ModelAdmin):
    """Rows that belong to one event, for whoever may manage that event (and the superusers).

    This is a small model of our own for object-level permissions: the `EventStaff` rows say who has
    which role in which event, and `events.policies` says what each role may do (`may_manage_event`),
    the same function the organisers' use cases ask. It was chosen over django-guardian (a permission
    row per object and person, to keep in step with every team change) and django-rules (predicates
    in a second place) because the roles are per event and every "may I?" already lives in
    `events/policies.py`. The model permissions (the managers' group) say what kind of rows a manager
    may open; this says which: the lists hold their events' rows only (`get_queryset`), each page
    asks the policy (`has_view_permission`, `has_change_permission`), and another event's page is
    not found (404: nobody learns which rows exist).
    """

    #: The lookup from a row to its event ("pk" for the event itself).
    event_lookup = "event"

    def event_of(self, obj: object) -> int:
        """The pk of the event `obj` belongs to."""
        raise NotImplementedError

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        managed = managed_event_ids(request)
        if managed is None:
            return queryset
        return queryset.filter(**{f"{self.event_lookup}__in": managed})

    def may_manage(self, request: HttpRequest, obj: object | None) -> bool:
        return obj is None or bool(policies.may_manage_event(staff_facts(request, self.event_of(obj))))

    def has_view_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return super().has_view_permission(request, obj) and self.may_manage(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return super().has_change_permission(request, obj) and self.may_manage(request, obj)

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None and managed_event_ids(request) is not None:
            raise Http404()  # another event's row, or none at all: a manager is not told which
        return obj


def _standing_check_ins() -> Prefetch:
    """Each registration's standing check-in (at most one), with its staff member, in one query."""
    standing = CheckIn.objects.filter(undone_at__isnull=True).select_related("staff")
    return Prefetch("check_ins", queryset=standing, to_attr="standing_check_ins")


def _standing(registration: Registration) -> CheckIn | None:
    found = getattr(registration, "standing_check_ins", None)
    if found is None:  # not prefetched (a page that shows one registration)
        found = list(registration.check_ins.filter(undone_at__isnull=True).select_related("staff"))
    return found[0] if found else None


def _name(user: User | None) -> str:
    return (user.get_full_name() or user.get_username()) if user is not None else ""


class CheckInColumns:
    """An attendee's check-in as columns: whether they are in, since when, let in by whom."""

    @admin.display(description=_("is checked in"), boolean=True)
    def checked_in(self, registration: Registration) -> bool:
        return _standing(registration) is not None

    @admin.display(description=_("checked in at"))
    def checked_in_at(self, registration: Registration) -> str:
        check_in = _standing(registration)
        if check_in is None:
            return "—"
        return formats.date_format(timezone.localtime(check_in.checked_in_at), "DATETIME_FORMAT")

    @admin.display(description=_("checked in by"))
    def checked_in_by(self, registration: Registration) -> str:
        check_in = _standing(registration)
        return _name(check_in.staff) if check_in is not None else "—"


class WhenListFilter(admin.SimpleListFilter):
    """Upcoming or past, relative to now (an event that has started counts as past)."""

    title = _("when")
    parameter_name = "when"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, StrOrPromise]]:
        return [("upcoming", _("Upcoming")), ("past", _("Past"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Event]) -> QuerySet[Event]:
        if self.value() == "upcoming":
            return cast(EventQuerySet, queryset).upcoming()
        if self.value() == "past":
            return cast(EventQuerySet, queryset).past()
        return queryset


class RegistrationInline(CheckInColumns, admin.TabularInline):
    """The event's attendees, each with their check-in (never their ticket code)."""

    model = Registration
    fields = readonly_fields = (
        "user",
        "status",
        "answers_given",
        "created_at",
        "checked_in",
        "checked_in_at",
        "checked_in_by",
    )
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ["-created_at", "-id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Registration]:
        return super().get_queryset(request).select_related("user").prefetch_related(_standing_check_ins())

    @admin.display(description=_("answers"))
    def answers_given(self, registration: Registration) -> str:
        shown = shown_answers(registration, translation.get_language(), staff=True)
        return format_html_join(mark_safe("<br>"), "{}: {}", ((a.label, a.value) for a in shown)) or "—"

    def has_add_permission(self, request: HttpRequest, obj: Event | None = None) -> bool:
        return False


class WaitlistInline(admin.TabularInline):
    """The event's waiting list in queue order: who waits, who holds a seat until when."""

    model = WaitlistEntry
    fields = readonly_fields = ("user", "status", "joined_at", "offered_at", "expires_at", "ended_at")
    extra = 0
    can_delete = False
    ordering = ["joined_at", "id"]
    verbose_name_plural = _("waiting list")

    def get_queryset(self, request: HttpRequest) -> QuerySet[WaitlistEntry]:
        return super().get_queryset(request).select_related("user")

    def has_add_permission(self, request: HttpRequest, obj: Event | None = None) -> bool:
        return False


class NotificationInline(admin.TabularInline):
    """The e-mails this event caused: to whom, and whether they went out."""

    model = Notification
    fields = readonly_fields = ("kind", "email", "status", "attempts", "created_at", "sent_at", "last_error")
    extra = 0
    can_delete = False
    ordering = ["-created_at", "-id"]

    def has_add_permission(self, request: HttpRequest, obj: Event | None = None) -> bool:
        return False


class QuestionFormSet(BaseInlineFormSet):
    """The event's questions as one form: at most `MAX_QUESTIONS`, and an answered question stays (its
    answers keep their meaning); the organiser is told why."""

    def clean(self) -> None:
        super().clean()
        kept = [form for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
        if len(kept) > MAX_QUESTIONS:
            raise ValidationError(_("An event asks at most %(count)d questions.") % {"count": MAX_QUESTIONS})
        for form in self.deleted_forms:
            if refusal := form.instance.change_refusal(deleted=True):  # policies.question_change_refusal
                raise ValidationError(refusal)


class QuestionInline(admin.TabularInline):
    """The event's registration questions, in the order people see them. Options, limits and help
    texts are on each question's own page (its change link)."""

    model = Question
    formset = QuestionFormSet
    fk_name = "event"
    fields = [
        "position",
        "identifier",
        "label_en",
        "label_zh_hant",
        "kind",
        "required",
        "show_if",
        "show_if_values",
        "staff_only",
        "show_at_door",
    ]
    extra = 0
    max_num = MAX_QUESTIONS
    ordering = ["position", "id"]
    show_change_link = True

    def formfield_for_foreignkey(self, db_field, request: HttpRequest, **kwargs):
        if db_field.name == "show_if":
            event_id = request.resolver_match.kwargs.get("object_id") if request.resolver_match else None
            kwargs["queryset"] = Question.objects.filter(event_id=event_id or 0, show_if__isnull=True)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class OptionFormSet(BaseInlineFormSet):
    """A question's options: at most `MAX_OPTIONS`; an option someone chose is hidden, never deleted."""

    def clean(self) -> None:
        super().clean()
        kept = [form for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
        if len(kept) > MAX_OPTIONS:
            raise ValidationError(_("A question offers at most %(count)d options.") % {"count": MAX_OPTIONS})
        chosen = self.instance.answered_values() if self.instance.pk is not None else set()
        for form in self.deleted_forms:
            if refusal := form.instance.deletion_refusal(chosen):  # policies.option_deletion_refusal
                raise ValidationError(refusal)


class OptionInline(admin.TabularInline):
    model = QuestionOption
    formset = OptionFormSet
    fields = ["position", "identifier", "label_en", "label_zh_hant", "hidden"]
    extra = 0
    max_num = MAX_OPTIONS
    ordering = ["position", "id"]


@admin.register(Question)
class QuestionAdmin(EventScopedAdmin):
    """One registration question with its options and limits (reached from its event's page)."""

    list_display = ["identifier", "event", "kind", "required", "staff_only", "show_at_door"]
    list_filter = [("event", admin.RelatedOnlyFieldListFilter), "kind"]
    list_select_related = ["event"]
    actions = None  # no bulk delete: one question at a time, each asked whether it was answered
    inlines = [OptionInline]
    fieldsets = [
        (None, {"fields": ["event", "position", "identifier", "kind", "required"]}),
        (_("What people read"), {"fields": ["label_en", "label_zh_hant", "help_en", "help_zh_hant"]}),
        (
            _("Limits"),
            {"fields": ["min_length", "max_length", "min_value", "max_value", "min_date", "max_date"]},
        ),
        (_("When it is asked"), {"fields": ["show_if", "show_if_values", "staff_only", "show_at_door"]}),
    ]

    def event_of(self, obj: object) -> int:
        return cast(Question, obj).event_id

    def get_readonly_fields(self, request: HttpRequest, obj: Question | None = None) -> list[str]:
        return ["event"] if obj is not None else []

    def has_delete_permission(self, request: HttpRequest, obj: Question | None = None) -> bool:
        """An answered question stays (`policies.question_change_refusal`); the event's page says why."""
        if obj is not None and obj.change_refusal(deleted=True):
            return False
        return super().has_delete_permission(request, obj)

    # Each save is the declared write `edit_questions`, with its Activity row (channel admin).
    def save_model(self, request: HttpRequest, obj: Question, form, change: bool) -> None:
        with recorded_write("edit_questions", _caller(request)) as record:
            record.event = obj.event_id
            super().save_model(request, obj, form, change)

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        with recorded_write("edit_questions", _caller(request)) as record:
            record.event, record.changed = form.instance.event_id, formset.has_changed()
            super().save_formset(request, form, formset, change)

    def delete_model(self, request: HttpRequest, obj: Question) -> None:
        with recorded_write("edit_questions", _caller(request)) as record:
            record.event = obj.event_id
            super().delete_model(request, obj)


class TicketTypeInline(admin.TabularInline):
    """The event's ticket types, all on its one capacity: a price (integer TWD, 0 free), an optional
    sales window (an early bird's) and an optional cap of their own. The event's price summary (the
    search's free or paid, "from TWD 600") follows from them."""

    model = TicketType
    fields = ["position", "identifier", "name_en", "name_zh_hant", "price", "sales_start", "sales_end", "cap"]
    extra = 0
    ordering = ["position", "id"]


class EventStaffInline(admin.TabularInline):
    """The event's team: its managers and door staff. Superusers change it (the managers' group may
    only view it), each change through its row (`EventAdmin.save_formset`); a manager added here gets
    the admin's access (`services.staff.sync_manager_access`)."""

    model = EventStaff
    fields = ["user", "role", "added_at"]
    readonly_fields = ["added_at"]
    raw_id_fields = ["user"]
    extra = 0
    ordering = ["role", "added_at", "id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[EventStaff]:
        return super().get_queryset(request).select_related("user")


def _plain(queryset: QuerySet[Event]) -> QuerySet[Event]:
    """The selected events without the changelist's annotation and ordering (which update() refuses)."""
    return Event.objects.filter(pk__in=queryset.values("pk"))


@admin.register(Event)
class EventAdmin(EventScopedAdmin):
    list_display = [
        "public_id",
        "title",
        "starts_at",
        "location",
        "price_display",
        "level",
        "status",
        "confirmed_registrations",
        "seats_left",
    ]
    list_display_links = ["public_id", "title"]
    list_filter = ["status", WhenListFilter, "location", "price", "level"]
    search_fields = ["title", "summary", "public_id", "venue"]
    date_hierarchy = "starts_at"
    ordering = ["-starts_at", "-id"]
    list_per_page = 50
    inlines = [
        EventStaffInline,
        TicketTypeInline,
        QuestionInline,
        RegistrationInline,
        WaitlistInline,
        NotificationInline,
    ]
    actions = ["publish", "unpublish", "cancel", "export_registrations_csv"]
    fieldsets = [
        (None, {"fields": ["public_id", "title", "summary", "description", "status"]}),
        (_("Registration"), {"fields": ["requires_approval", "answers_close_at"]}),
        (_("When and where"), {"fields": ["starts_at", "ends_at", "location", "venue"]}),
        (
            _("Price, level and seats"),
            {"fields": ["price", "price_amount", "currency", "level", "capacity", "offer_hours"]},
        ),
        (
            _("Payments"),
            {"fields": ["payment_code", "payment_closes_at", "at_door", "pending_may_pay_at_door"]},
        ),
        (_("Record"), {"fields": ["created_at", "updated_at"], "classes": ["collapse"]}),
    ]
    event_lookup = "pk"

    def event_of(self, obj: object) -> int:
        return cast(Event, obj).pk

    def get_queryset(self, request: HttpRequest) -> QuerySet[Event]:
        return cast(EventQuerySet, super().get_queryset(request)).with_seats()

    def get_fieldsets(self, request: HttpRequest, obj: Event | None = None):
        fieldsets = list(super().get_fieldsets(request, obj))
        if obj is not None:
            fieldsets.insert(1, (_("The door"), {"fields": ["door_summary", "payments_summary"]}))
        return fieldsets

    def get_readonly_fields(self, request: HttpRequest, obj: Event | None = None) -> list[str]:
        # An id is in URLs, tool results and agents' traces: once an event exists it never changes.
        # The status changes only through the actions (publish, unpublish, cancel): use cases with
        # their Activity row and their effects on registrants.
        if obj is not None:
            fields = ["public_id", "status", "door_summary", "payments_summary", "created_at", "updated_at"]
            if obj.ticket_form:  # the price summary follows from the ticket types
                fields += ["price", "price_amount", "currency"]
            return fields
        return ["created_at", "updated_at"]

    @admin.display(description=_("payments"))
    def payments_summary(self, event: Event) -> str:
        """The event's money: what is awaited, what is paid, what was refunded and what is to refund
        (integer TWD), with links to the registrations behind each figure."""
        rows = Registration.objects.filter(event=event).exclude(amount=0)
        awaited = rows.filter(payment_status__in=OWED).aggregate(n=Count("pk"), total=Sum("amount"))
        paid = rows.filter(payment_status=PaymentStatus.PAID).aggregate(
            n=Count("pk"), total=Sum("paid_amount")
        )
        refunded = rows.filter(payment_status=PaymentStatus.REFUNDED).aggregate(total=Sum("refunded_amount"))
        to_refund = rows.filter(PaymentFilter.REFUND_DUE).count()
        told = _(
            "Awaited: %(awaited)d (TWD %(awaited_total)s) · paid: %(paid)d (TWD %(paid_total)s) · "
            "refunded: TWD %(refunded)s · to refund: %(to_refund)d"
        ) % {
            "awaited": awaited["n"],
            "awaited_total": f"{awaited['total'] or 0:,}",
            "paid": paid["n"],
            "paid_total": f"{paid['total'] or 0:,}",
            "refunded": f"{refunded['total'] or 0:,}",
            "to_refund": to_refund,
        }
        url = f"{reverse('admin:events_registration_changelist')}?event__id__exact={event.pk}&payment=unpaid"
        return format_html('{} <a href="{}">{}</a>', told, url, _("Unpaid registrations"))

    @admin.display(description=_("attendees"))
    def door_summary(self, event: Event) -> str:
        """How many of the event's confirmed attendees are in, and where to see each one's check-in."""
        confirmed = Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED)
        checked_in = CheckIn.objects.filter(registration__in=confirmed, undone_at__isnull=True).count()
        told = _("%(checked_in)d of %(confirmed)d confirmed attendees are checked in.") % {
            "checked_in": checked_in,
            "confirmed": confirmed.count(),
        }
        url = f"{reverse('admin:events_registration_changelist')}?event__id__exact={event.pk}"
        return format_html('{} <a href="{}">{}</a>', told, url, _("Each attendee's check-in"))

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        """The team's rows are changed by their actions, each with its Activity row: a person taken
        off (or replaced in a row) by `remove_event_staff`, a person added or given a new role by
        `add_event_staff`, which also give or take the admin's access. The questions and the ticket
        types are the declared writes `edit_questions` (their rules: `policies.question_change_refusal`)
        and `edit_ticket_types`, each with its Activity row when it changed something; the other
        inlines are read-only (nothing to save, no row)."""
        if formset.model is not EventStaff:
            name = "edit_ticket_types" if formset.model is TicketType else "edit_questions"
            with recorded_write(name, _caller(request)) as record:
                record.event = form.instance.pk
                record.changed = formset.model in (Question, TicketType) and formset.has_changed()
                super().save_formset(request, form, formset, change)
            return
        formset.save(commit=False)  # sorts the rows into new, changed and deleted; saves nothing
        event_id = form.instance.public_id
        performed = [
            _perform(
                request, "remove_event_staff", {"event_id": event_id, "username": row.user.get_username()}
            )
            for row in formset.deleted_objects
        ]
        for row, fields in formset.changed_objects:
            if "user" in fields:  # the row now names someone else: the person it named is taken off
                before = EventStaff.objects.select_related("user").get(pk=row.pk).user
                data = {"event_id": event_id, "username": before.get_username()}
                performed.append(_perform(request, "remove_event_staff", data))
        for row in [*formset.new_objects, *(row for row, _fields in formset.changed_objects)]:
            data = {"event_id": event_id, "username": row.user.get_username(), "role": row.role}
            performed.append(_perform(request, "add_event_staff", data))
        _results(request, performed)

    def has_delete_permission(self, request: HttpRequest, obj: Event | None = None) -> bool:
        # Deleting would break links and registrations; an organiser cancels instead.
        return False

    def save_model(self, request: HttpRequest, obj: Event, form, change: bool) -> None:
        """The form's fields through `edit_event` (its Activity row; a new event takes every field, a
        change the ones changed). A capacity raise frees seats: they go to the waiting list at once,
        in the same transaction."""
        fields = form.changed_data if change else form.cleaned_data
        data: dict[str, object] = {"changes": {name: form.cleaned_data[name] for name in fields}}
        if change:
            data["event_pk"] = obj.pk
        performed = _perform(request, "edit_event", data)
        if performed.error is not None:  # the form and the page's permissions let only a valid change in
            raise PermissionDenied(str(performed.error))
        obj.pk = performed.result.event.pk
        obj._state.adding = False
        obj.refresh_from_db()
        if change and {"capacity", "offer_hours"} & set(form.changed_data):
            performed = _perform(request, "offer_free_seats", {"event_id": obj.public_id})
            for result in _results(request, [performed]):
                self._tell_offered(request, result.offered)

    def _tell_offered(self, request: HttpRequest, offered: int) -> None:
        if not offered:
            return
        self.message_user(
            request,
            ngettext(
                "%(count)d seat was offered to the waiting list; the person is told by e-mail.",
                "%(count)d seats were offered to the waiting list; each person is told by e-mail.",
                offered,
            )
            % {"count": offered},
            messages.SUCCESS,
        )

    @admin.display(description=_("price"), ordering="price_amount")
    def price_display(self, event: Event) -> str:
        if event.price_amount is None:
            return event.get_price_display()
        return f"{event.currency} {event.price_amount:,}"

    @admin.display(description=_("confirmed registrations"), ordering="confirmed_count")
    def confirmed_registrations(self, event: WithAnnotations[Event, SeatCounts]) -> int:
        return event.confirmed_count

    @admin.display(description=_("seats left"), ordering="seats_left")
    def seats_left(self, event: WithAnnotations[Event, SeatCounts]) -> StrOrPromise | int | None:
        if event.capacity is None:
            return _("unlimited")
        return event.seats_left

    def _apply(self, request: HttpRequest, queryset: QuerySet[Event], name: str) -> list:
        """Perform an organiser's action on each selected event (its own transaction, Activity row and
        effects), as the person signed in to the admin."""
        ids = list(_plain(queryset).values_list("public_id", flat=True))
        return _results(request, [_perform(request, name, {"event_id": event_id}) for event_id in ids])

    @admin.action(description=_("Publish selected events"), permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Event]) -> None:
        results = self._apply(request, queryset, "publish_event")
        count = sum(result.changed for result in results)
        _tell_done(
            self,
            request,
            results,
            ngettext("%(count)d event was published.", "%(count)d events were published.", count)
            % {"count": count},
            messages.SUCCESS,
        )

    @admin.action(description=_("Unpublish selected events (back to draft)"), permissions=["change"])
    def unpublish(self, request: HttpRequest, queryset: QuerySet[Event]) -> None:
        results = self._apply(request, queryset, "unpublish_event")
        count = sum(result.changed for result in results)
        _tell_done(
            self,
            request,
            results,
            ngettext(
                "%(count)d event was moved back to draft.",
                "%(count)d events were moved back to draft.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )

    @admin.action(description=_("Cancel selected events"), permissions=["change"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[Event]) -> None:
        results = self._apply(request, queryset, "cancel_event")
        count = sum(result.changed for result in results)
        told = sum(result.cancelled_registrations for result in results)
        _tell_done(
            self,
            request,
            results,
            ngettext("%(count)d event was cancelled.", "%(count)d events were cancelled.", count)
            % {"count": count}
            + " "
            + ngettext(
                "%(told)d registration was cancelled with it; its holder is told by e-mail.",
                "%(told)d registrations were cancelled with them; their holders are told by e-mail.",
                told,
            )
            % {"told": told},
            messages.WARNING if count else messages.INFO,
        )

    @admin.action(description=_("Export registrations (CSV)"), permissions=["view"])
    def export_registrations_csv(self, request: HttpRequest, queryset: QuerySet[Event]) -> HttpResponse:
        """Confirmed registrations of the selected events, one row each with its check-in (whether the
        person is in, since when, let in by whom) and one column per question (its identifier; several
        choices joined by commas), in three queries in all. Every cell is formula-safe (`safe_cell`):
        names, titles and answers are people's text."""
        registrations = (
            Registration.objects.filter(event__in=queryset.values("pk"))
            .filter(
                Q(status__in=HOLDING_SEAT)
                | Q(payment_status__in=[PaymentStatus.PAID, PaymentStatus.REFUNDED])
            )
            .select_related("event", "user")
            .prefetch_related(_standing_check_ins())
            .order_by("event__starts_at", "event__id", "created_at", "id")
        )
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="registrations.csv"'
        # A byte-order mark lets spreadsheet programs read the zh-Hant titles as UTF-8.
        response.write("\ufeff")
        writer = csvsafe.writer(response)  # every cell neutralised (core/csvsafe.py)
        rows = list(registrations)
        columns = _question_columns(rows)
        writer.writerow([*CSV_HEADER, *columns])
        language = translation.get_language()
        for registration in rows:
            check_in = _standing(registration)
            answers = {a.identifier: a.value for a in shown_answers(registration, language, staff=True)}
            cells = [
                registration.event.public_id,
                registration.event.title,
                registration.user.get_username(),
                registration.user.email,
                timezone.localtime(registration.created_at).isoformat(),
                "yes" if check_in is not None else "no",
                timezone.localtime(check_in.checked_in_at).isoformat() if check_in is not None else "",
                _name(check_in.staff) if check_in is not None else "",
                *_payment_cells(registration),
                *(answers.get(identifier, "") for identifier in columns),
            ]
            writer.writerow(cells)
        return response


def _payment_cells(registration: Registration) -> list[str]:
    """A registration's status, ticket type and money (integer TWD) as the export's cells. Never the
    account digits the person reported (a credential)."""

    def when(moment) -> str:
        return timezone.localtime(moment).isoformat() if moment else ""

    return [
        registration.status,
        registration.ticket_type or "general",
        str(registration.amount),
        registration.payment_status,
        registration.payment_reference_text,
        when(registration.paid_at),
        registration.paid_via,
        str(registration.refunded_amount),
        when(registration.refunded_at),
    ]


def _question_columns(registrations: list[Registration]) -> list[str]:
    """One column per question identifier of the exported events, in their events' order."""
    columns: dict[str, None] = {}
    for event in {r.event_id: r.event for r in registrations}.values():
        for question in form_of(event.question_form):
            columns.setdefault(question.identifier)
    return list(columns)


def _caller(request: HttpRequest) -> Caller:
    # The admin site lets in only signed-in staff.
    return Caller(visitor=request.visitor, channel=Mode.ADMIN)  # type: ignore[attr-defined]


def _perform(request: HttpRequest, name: str, data: dict[str, object]) -> Performed:
    return perform(ACTIONS[name], _caller(request), data)


def _tell_done(
    model_admin: admin.ModelAdmin,
    request: HttpRequest,
    results: list,
    message: str,
    level: int = messages.SUCCESS,
) -> None:
    """The line for the calls that went through; none when every call was refused (`_results` told
    each refusal), so a refusal is never shown beside "0 … were published"."""
    if results:
        model_admin.message_user(request, message, level)


def _results(request: HttpRequest, performed: list[Performed]) -> list:
    """The results of the calls that went through; each refusal is told to the organiser once."""
    for reason, message in sorted({(p.error.reason, str(p.error.message)) for p in performed if p.error}):
        messages.error(request, f"{reason}: {message}")
    return [p.result for p in performed if p.error is None]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows that change only through the use cases (seats, the waiting list, e-mails, Activity): the
    admin shows them and offers those use cases as actions, and never edits them itself."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object | None = None) -> bool:
        return False


class CheckedInFilter(admin.SimpleListFilter):
    """Whether the attendee is in: a standing (not undone) check-in."""

    title = _("is checked in")
    parameter_name = "checked_in"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, StrOrPromise]]:
        return [("yes", _("Yes")), ("no", _("No"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Registration]) -> QuerySet[Registration]:
        standing = Exists(CheckIn.objects.filter(registration=OuterRef("pk"), undone_at__isnull=True))
        if self.value() == "yes":
            return queryset.filter(standing)
        if self.value() == "no":
            return queryset.filter(~standing)
        return queryset


class PaymentFilter(admin.SimpleListFilter):
    """The registrations whose money needs the organisers: unpaid (a transfer awaited or being checked,
    or due at the door), overdue (past the deadline, not yet swept), being checked (the person reported
    their transfer), to refund (paid, no seat any more or the event cancelled)."""

    title = _("payment")
    parameter_name = "payment"
    REFUND_DUE = Q(payment_status=PaymentStatus.PAID, refunded_amount=0) & (
        ~Q(status__in=HOLDING_SEAT) | Q(event__status=EventStatus.CANCELLED)
    )

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, StrOrPromise]]:
        return [
            ("unpaid", _("Unpaid")),
            ("overdue", _("Overdue")),
            ("checking", _("Being checked")),
            ("refund", _("To refund")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Registration]) -> QuerySet[Registration]:
        value = self.value()
        if value == "unpaid":
            return queryset.filter(payment_status__in=OWED, status__in=HOLDING_SEAT)
        if value == "overdue":
            return queryset.filter(
                status=RegistrationStatus.PENDING_PAYMENT, payment_due_at__lte=timezone.now()
            )
        if value == "checking":
            return queryset.filter(payment_status=PaymentStatus.CHECKING)
        if value == "refund":
            return queryset.filter(self.REFUND_DUE)
        return queryset


@admin.register(Registration)
class RegistrationAdmin(CheckInColumns, EventScopedAdmin, ReadOnlyAdmin):
    """Each event's attendees with their check-in: filter by event to see who is in. The ticket code is
    neither shown nor searchable nor filterable."""

    list_display = [
        "user",
        "event",
        "status",
        "ticket_type",
        "money",
        "payment_status",
        "payment_due_at",
        "checked_in",
        "checked_in_at",
        "checked_in_by",
        "created_at",
    ]
    list_filter = [
        "status",
        PaymentFilter,
        "payment_status",
        ("event", admin.RelatedOnlyFieldListFilter),
        CheckedInFilter,
    ]
    list_select_related = ["user", "event"]
    search_fields = ["user__username", "user__email", "event__title", "event__public_id", "payment_reference"]
    date_hierarchy = "created_at"
    actions = [
        "cancel_registrations",
        "approve_registrations",
        "decline_registrations",
        "confirm_payments",
        "refund_payments",
    ]
    fields = readonly_fields = (
        "user",
        "event",
        "status",
        "answers_given",
        "organisers_answers",
        "ticket_type",
        "amount",
        "payment_method",
        "payment_status",
        "payment_reference_text",
        "payment_due_at",
        "reported_last5",
        "reported_paid_on",
        "reported_at",
        "paid_amount",
        "paid_at",
        "paid_via",
        "refunded_amount",
        "refunded_at",
        "refunded_by",
        "ticket_issued_at",
        "checked_in",
        "checked_in_at",
        "checked_in_by",
        "created_at",
        "updated_at",
    )

    def event_of(self, obj: object) -> int:
        return cast(Registration, obj).event_id

    def get_queryset(self, request: HttpRequest) -> QuerySet[Registration]:
        return super().get_queryset(request).prefetch_related(_standing_check_ins())

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        if "ticket_code" in lookup.split("__"):
            return False  # a filter on the code would tell it, a character at a time
        return super().lookup_allowed(lookup, value, request)

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        """Offered to whoever manages an event; the use case asks the policy for each registration."""
        return managed_event_ids(request) != frozenset()

    has_decide_permission = has_cancel_permission

    @admin.display(description=_("answers"))
    def answers_given(self, registration: Registration) -> str:
        """Every answer, the organisers' own included, each under the question it answered."""
        shown = shown_answers(registration, translation.get_language(), staff=True)
        return format_html_join(mark_safe("<br>"), "{}: {}", ((a.label, a.value) for a in shown)) or "—"

    @admin.display(description=_("organisers' answers"))
    def organisers_answers(self, registration: Registration) -> str:
        """Where the event's managers fill in their own questions (none: nothing to fill)."""
        if not any(q.staff_only for q in form_of(registration.event.question_form)):
            return "—"
        url = reverse("admin:events_registration_staff_answers", args=[registration.pk])
        return format_html('<a href="{}">{}</a>', url, _("Fill in the organisers' questions"))

    def get_urls(self):
        staff_answers = self.admin_site.admin_view(self.staff_answers_view)
        return [
            path("<path:object_id>/staff-answers/", staff_answers, name="events_registration_staff_answers"),
            *super().get_urls(),
        ]

    def staff_answers_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The organisers-only questions of one registration's event, filled in by its managers through
        `update_staff_answers` (its Activity row, channel admin); the person never sees them."""
        registration = self.get_object(request, object_id)
        if registration is None or not self.has_view_permission(request, registration):
            raise Http404()
        questions = tuple(q for q in form_of(registration.event.question_form) if q.staff_only)
        values = {key: answer.get("value") for key, answer in (registration.answers or {}).items()}
        errors = None
        if request.method == "POST":
            answers = answers_from_post(questions, request.POST)
            data = {"registration_id": registration.pk, "answers": answers}
            performed = _perform(request, "update_staff_answers", data)
            if performed.error is None:
                self.message_user(request, _("The organisers' answers are saved."), messages.SUCCESS)
                return redirect(reverse("admin:events_registration_change", args=[registration.pk]))
            errors = performed.error.extra.get("fields")
            if not errors:
                messages.error(request, f"{performed.error.reason}: {performed.error.message}")
            values = {**values, **answers}
        context = {
            **self.admin_site.each_context(request),
            "title": _("Organisers' answers"),
            "subtitle": str(registration),
            "opts": self.model._meta,
            "original": registration,
            "answer_fields": answer_fields(
                questions, values, errors=errors, language=translation.get_language()
            ),
        }
        return TemplateResponse(request, "admin/events/registration/staff_answers.html", context)

    @admin.display(description=_("amount"), ordering="amount")
    def money(self, registration: Registration) -> str:
        return f"TWD {registration.amount:,}" if registration.amount else "—"

    @admin.display(description=_("payment reference"))
    def payment_reference_text(self, registration: Registration) -> str:
        return registration.payment_reference_text or "—"

    @admin.action(description=_("Confirm the selected payments"), permissions=["decide"])
    def confirm_payments(self, request: HttpRequest, queryset: QuerySet[Registration]) -> None:
        """Each through `confirm_payment`: confirmed, with a ticket, and the person gets it by e-mail."""
        self._pay(request, queryset, "confirm_payment")

    @admin.action(description=_("Record a full refund of the selected payments"), permissions=["decide"])
    def refund_payments(self, request: HttpRequest, queryset: QuerySet[Registration]) -> None:
        """Each through `refund_payment` (the money moves outside the site; this records it)."""
        self._pay(request, queryset, "refund_payment")

    def _pay(self, request: HttpRequest, queryset: QuerySet[Registration], name: str) -> None:
        rows = list(queryset.order_by("pk").values_list("pk", "event__public_id"))
        performed = [
            _perform(request, name, {"event_id": event_id, "attendee_id": pk}) for pk, event_id in rows
        ]
        results = _results(request, performed)
        count = sum(result.changed for result in results)
        _tell_done(
            self,
            request,
            results,
            ngettext(
                "%(count)d payment was recorded; the person is told.",
                "%(count)d payments were recorded; each person is told.",
                count,
            )
            % {"count": count},
        )

    @admin.action(description=_("Approve selected registrations"), permissions=["decide"])
    def approve_registrations(self, request: HttpRequest, queryset: QuerySet[Registration]) -> None:
        """Each through `approve_registration`: confirmed, with a ticket, and the person is told."""
        self._decide(request, queryset, "approve_registration")

    @admin.action(description=_("Decline selected registrations"), permissions=["decide"])
    def decline_registrations(self, request: HttpRequest, queryset: QuerySet[Registration]) -> None:
        """Each through `decline_registration`: the seat goes to whoever waits first; the person is told."""
        self._decide(request, queryset, "decline_registration")

    def _decide(self, request: HttpRequest, queryset: QuerySet[Registration], name: str) -> None:
        ids = list(queryset.order_by("pk").values_list("pk", flat=True))
        results = _results(request, [_perform(request, name, {"registration_id": pk}) for pk in ids])
        count = sum(result.changed for result in results)
        _tell_done(
            self,
            request,
            results,
            ngettext(
                "%(count)d registration was decided; the person is told by e-mail.",
                "%(count)d registrations were decided; each person is told by e-mail.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )

    @admin.action(description=_("Cancel selected registrations"), permissions=["cancel"])
    def cancel_registrations(self, request: HttpRequest, queryset: QuerySet[Registration]) -> None:
        """Each through the organiser's use case: the freed seat goes to the first person waiting."""
        ids = list(queryset.order_by("pk").values_list("pk", flat=True))
        results = _results(
            request,
            [_perform(request, "cancel_attendee_registration", {"registration_id": pk}) for pk in ids],
        )
        count = sum(not result.already_cancelled for result in results)
        _tell_done(
            self,
            request,
            results,
            ngettext(
                "%(count)d registration was cancelled; its seat goes to whoever waits first.",
                "%(count)d registrations were cancelled; their seats go to whoever waits first.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )


class StandingFilter(admin.SimpleListFilter):
    """Standing check-ins (the person is in) or undone ones (kept as a record)."""

    title = _("status")
    parameter_name = "undone"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, StrOrPromise]]:
        return [("no", _("Standing")), ("yes", _("Undone"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[CheckIn]) -> QuerySet[CheckIn]:
        if self.value() in ("yes", "no"):
            return queryset.filter(undone_at__isnull=self.value() == "no")
        return queryset


@admin.register(CheckIn)
class CheckInAdmin(EventScopedAdmin, ReadOnlyAdmin):
    """Who was let in at which event, when (the server's time, and the device's), by whom; undone
    check-ins stay as a record. Written only at the door (the check-in use cases)."""

    list_display = [
        "attendee",
        "event",
        "checked_in_at",
        "checked_in_by",
        "scanned_at",
        "scan_time_in_future",
        "undone_at",
        "undone_by",
    ]
    list_filter = [
        ("registration__event", admin.RelatedOnlyFieldListFilter),
        StandingFilter,
        "scan_time_in_future",
    ]
    list_select_related = ["registration__user", "registration__event", "staff", "undone_by"]
    search_fields = [
        "registration__user__username",
        "registration__user__first_name",
        "registration__user__last_name",
        "registration__user__email",
        "registration__event__public_id",
    ]
    date_hierarchy = "checked_in_at"
    fields = readonly_fields = (
        "registration",
        "staff",
        "checked_in_at",
        "scanned_at",
        "scan_time_in_future",
        "scan_id",
        "undone_at",
        "undone_by",
    )
    event_lookup = "registration__event"

    def event_of(self, obj: object) -> int:
        return cast(CheckIn, obj).registration.event_id

    @admin.display(description=_("attendee"), ordering="registration__user__username")
    def attendee(self, check_in: CheckIn) -> str:
        return _name(check_in.registration.user)

    @admin.display(description=_("event"), ordering="registration__event__starts_at")
    def event(self, check_in: CheckIn) -> str:
        return check_in.registration.event.public_id

    @admin.display(description=_("checked in by"), ordering="staff__username")
    def checked_in_by(self, check_in: CheckIn) -> str:
        return _name(check_in.staff) or "—"


class BankImportForm(forms.Form):
    """The upload: a statement file, and the event it is for (required of an event's managers; a
    superuser may import a statement of every event)."""

    statement = forms.FileField(label=_("Bank statement (CSV)"))
    event = forms.ModelChoiceField(
        queryset=Event.objects.none(), required=False, label=_("Event"), empty_label=_("Every event")
    )

    def __init__(self, *args, managed: frozenset[int] | None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = cast(forms.ModelChoiceField, self.fields["event"])
        field.queryset = (
            Event.objects.order_by("-starts_at") if managed is None else Event.objects.filter(pk__in=managed)
        )
        field.required = managed is not None


@admin.register(BankStatementRow)
class BankStatementRowAdmin(EventScopedAdmin, ReadOnlyAdmin):
    """Every imported bank statement row and what became of it (its state): matched and confirmed,
    already paid, no match, invalid, late, partial, overpaid, for a cancelled registration. Rows are
    written only by the import (`apply_bank_row`, once per row): the upload page here or
    `manage.py import_bank_statement`. The payer's account digits are shown masked in the list."""

    list_display = ["imported_at", "source", "line", "booked_on", "amount", "state", "event", "payer_masked"]
    list_filter = ["state", ("event", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["event"]
    search_fields = ["reference", "source"]
    date_hierarchy = "imported_at"
    readonly_fields = [
        "checksum",
        "event",
        "registration",
        "source",
        "line",
        "booked_on",
        "amount",
        "reference",
        "payer",
        "account_last5",
        "state",
        "problem",
        "imported_at",
        "imported_by",
    ]
    change_list_template = "admin/events/bankstatementrow/change_list.html"

    def event_of(self, obj: object) -> int:
        return cast(BankStatementRow, obj).event_id or 0

    @admin.display(description=_("payer"))
    def payer_masked(self, row: BankStatementRow) -> str:
        return (
            f"{row.payer} · {mask_digits(row.account_last5)}" if row.payer else mask_digits(row.account_last5)
        )

    def get_urls(self):
        own = [
            path(
                "import/",
                self.admin_site.admin_view(self.import_view),
                name="events_bankstatementrow_import",
            )
        ]
        return own + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a statement: it is read (`read_statement`), then each row applied by `apply_bank_row`
        as the person signed in, and every row's state shown (the account digits masked)."""
        managed = managed_event_ids(request)
        if managed == frozenset() or not self.has_view_permission(request):
            raise PermissionDenied
        form = BankImportForm(request.POST or None, request.FILES or None, managed=managed)
        rows: list[dict[str, object]] = []
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["statement"]
            event = form.cleaned_data["event"]
            statement = read_statement(upload.read(), max_bytes=settings.BANK_IMPORT_MAX_BYTES)
            if statement.refusal:
                messages.error(
                    request, _("This file cannot be read: %(reason)s.") % {"reason": statement.refusal}
                )
            else:
                event_id = event.public_id if event is not None else None
                for row in statement.rows:
                    data = bank_row_data(row, source=upload.name, event_id=event_id)
                    performed = _perform(request, "apply_bank_row", data)
                    rows.append(_imported(row, performed))
                # The organiser reads labels, not codes: "Matched: payment confirmed × 1; No match × 1".
                tally = Counter(
                    str(row["label"]) if row["state"] != "error" else str(_("Refused")) for row in rows
                )
                messages.success(
                    request,
                    ngettext("%(count)d row read.", "%(count)d rows read.", len(rows)) % {"count": len(rows)}
                    + " "
                    + "; ".join(f"{label} × {count}" for label, count in sorted(tally.items())),
                )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Import a bank statement"),
            "form": form,
            "rows": rows,
        }
        return TemplateResponse(request, "admin/events/bankstatementrow/import.html", context)


def _imported(row, performed: Performed) -> dict[str, object]:
    """One row of the upload page: what the file said (digits masked) and what became of it."""
    if performed.error is not None:
        state, label = "error", f"{performed.error.reason}: {performed.error.message}"
    elif not performed.result.applied:
        state, label = "already_imported", str(_("Imported before: nothing changed"))
    else:
        state = performed.result.state
        label = str(BankRowState(state).label)
    return {
        "line": row.line,
        "date": row.date,
        "amount": row.amount,
        "reference": row.reference,
        "payer": row.payer,
        "account": mask_digits(row.account_last5),
        "state": state,
        "label": label,
        "problem": row.problem or "",
    }


@admin.register(SavedEvent)
class SavedEventAdmin(ReadOnlyAdmin):
    """Each visitor's saved events, to read only. A save is the person's own bookmark, made and
    removed by them alone (`save_event`, `unsave_event`, each on the visitor's own saves): it holds
    no seat and tells nobody anything, so an organiser has nothing to do with it, and the admin
    offers no action on it (no add, change or delete, and no bulk delete)."""

    list_display = ["event", "user", "visitor_token", "created_at"]
    list_select_related = ["user", "event"]
    search_fields = ["user__username", "event__title", "event__public_id"]


@admin.register(WaitlistEntry)
class WaitlistEntryAdmin(ReadOnlyAdmin):
    """The waiting lists, to read only: who waits for which event, who holds an offered seat until
    when. An entry changes only through the waiting-list use cases, which keep the queue's order, the
    offers and the seat ledger in step and write the Activity row: people join and leave
    (`join_waitlist`, `leave_waitlist`, their own entry only), freed seats are offered
    (`offer_free_seats`, the waiting-list task) and `cancel_event` closes them all. No use case takes
    someone else off a waiting list, so there is no action for it here, and no change or delete
    (deleting a row would skip the offer to the next person and the seat ledger). An organiser's
    removal would be a new action row with its own policy; until one exists, the person leaves the
    list themselves."""

    list_display = ["event", "user", "status", "joined_at", "expires_at", "ended_at"]
    list_filter = ["status"]
    list_select_related = ["user", "event"]
    search_fields = ["user__username", "user__email", "event__title", "event__public_id"]
    readonly_fields = ["event", "user", "status", "joined_at", "offered_at", "expires_at", "ended_at"]
    date_hierarchy = "joined_at"


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    """The outbox: every e-mail the site decided to send, and whether it went out."""

    list_display = ["kind", "email", "event", "status", "attempts", "created_at", "sent_at"]
    list_filter = ["status", "kind"]
    list_select_related = ["event"]
    search_fields = ["email", "event__title", "event__public_id", "key"]
    date_hierarchy = "created_at"
    readonly_fields = [
        "kind",
        "key",
        "user",
        "email",
        "event",
        "registration",
        "entry",
        "language",
        "status",
        "attempts",
        "last_error",
        "created_at",
        "claimed_at",
        "sent_at",
    ]
    actions = ["send_again"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Notification | None = None) -> bool:
        return False

    @admin.action(description=_("Try sending the failed ones again"), permissions=["change"])
    def send_again(self, request: HttpRequest, queryset: QuerySet[Notification]) -> None:
        """Each failed one through `resend_notification` (its Activity row)."""
        failed = queryset.filter(status=NotificationStatus.FAILED).order_by("pk").values_list("pk", flat=True)
        results = _results(
            request, [_perform(request, "resend_notification", {"notification_id": pk}) for pk in failed]
        )
        count = sum(result.queued for result in results)
        self.message_user(
            request,
            ngettext("%(count)d e-mail is queued again.", "%(count)d e-mails are queued again.", count)
            % {"count": count},
            messages.SUCCESS,
        )


@admin.register(Activity)
class ActivityAdmin(admin.ModelAdmin):
    """What people, agents and programs did; written only by the use cases."""

    list_display = ["action", "mode", "outcome", "client", "event", "user", "created_at"]
    list_filter = ["action", "mode", "outcome"]
    list_select_related = ["event", "user"]
    search_fields = ["action", "outcome", "client", "event__public_id", "user__username"]
    date_hierarchy = "created_at"
    readonly_fields = ["action", "mode", "outcome", "client", "event", "user", "visitor_token", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Activity | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Activity | None = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        response = super().changelist_view(request, extra_context=extra_context)
        # The summary counts the rows the changelist shows: the same filters, search and dates.
        context = getattr(response, "context_data", None)
        if context is None or "cl" not in context:
            return response  # a redirect, e.g. after an invalid filter
        context["summary"] = summarise(context["cl"].queryset)
        return response


def summarise(queryset: QuerySet[Activity]) -> list[dict[str, object]]:
    """Counts by action × mode × outcome, in one grouped query."""
    labels = dict(Mode.choices)
    rows = queryset.order_by().values("action", "mode", "outcome").annotate(count=Count("id"))
    return [
        {**row, "mode_label": labels.get(row["mode"], row["mode"])}
        for row in rows.order_by("action", "mode", "outcome")
    ]
