"""The organisers' screens (layer 4): manage events and registrations, read how the site is used.

The admin edits rows directly, so it only offers what keeps the domain's promises: events are
cancelled rather than deleted (their public ids are never reused or changed), and activity is a
read-only record.
"""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING, TypedDict, cast

from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from core.visitors import Mode, Visitor

from .actions import ACTIONS, Caller, Performed, perform
from .choices import NotificationStatus, RegistrationStatus
from .mail import outbox
from .models import Activity, Event, EventQuerySet, Notification, Registration, SavedEvent, WaitlistEntry

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise, WithAnnotations

    class SeatCounts(TypedDict):
        """What `EventQuerySet.with_seats()` annotates."""

        confirmed_count: int
        seats_left: int | None


admin.site.site_header = _("AgentReady Events admin")
admin.site.site_title = _("AgentReady Events admin")
admin.site.index_title = _("Events, registrations and activity")

CSV_HEADER = ["event id", "event title", "username", "email", "registered at"]


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


class RegistrationInline(admin.TabularInline):
    model = Registration
    fields = ["user", "status", "created_at"]
    readonly_fields = ["user", "status", "created_at"]
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ["-created_at", "-id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Registration]:
        return super().get_queryset(request).select_related("user")

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


def _plain(queryset: QuerySet[Event]) -> QuerySet[Event]:
    """The selected events without the changelist's annotation and ordering (which update() refuses)."""
    return Event.objects.filter(pk__in=queryset.values("pk"))


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
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
    inlines = [RegistrationInline, WaitlistInline, NotificationInline]
    actions = ["publish", "unpublish", "cancel", "export_registrations_csv"]
    fieldsets = [
        (None, {"fields": ["public_id", "title", "summary", "description", "status"]}),
        (_("When and where"), {"fields": ["starts_at", "ends_at", "location", "venue"]}),
        (
            _("Price, level and seats"),
            {"fields": ["price", "price_amount", "currency", "level", "capacity", "offer_hours"]},
        ),
        (_("Record"), {"fields": ["created_at", "updated_at"], "classes": ["collapse"]}),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Event]:
        return cast(EventQuerySet, super().get_queryset(request)).with_seats()

    def get_readonly_fields(self, request: HttpRequest, obj: Event | None = None) -> list[str]:
        # An id is in URLs, tool results and agents' traces: once an event exists it never changes.
        # The status changes only through the actions (publish, unpublish, cancel): use cases with
        # their Activity row and their effects on registrants.
        if obj is not None:
            return ["public_id", "status", "created_at", "updated_at"]
        return ["created_at", "updated_at"]

    def has_delete_permission(self, request: HttpRequest, obj: Event | None = None) -> bool:
        # Deleting would break links and registrations; an organiser cancels instead.
        return False

    def save_model(self, request: HttpRequest, obj: Event, form, change: bool) -> None:
        """A capacity raise frees seats: they go to the waiting list at once, in the same transaction."""
        super().save_model(request, obj, form, change)
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
        count = sum(result.changed for result in self._apply(request, queryset, "publish_event"))
        self.message_user(
            request,
            ngettext("%(count)d event was published.", "%(count)d events were published.", count)
            % {"count": count},
            messages.SUCCESS,
        )

    @admin.action(description=_("Unpublish selected events (back to draft)"), permissions=["change"])
    def unpublish(self, request: HttpRequest, queryset: QuerySet[Event]) -> None:
        count = sum(result.changed for result in self._apply(request, queryset, "unpublish_event"))
        self.message_user(
            request,
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
        self.message_user(
            request,
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
        """Confirmed registrations of the selected events, one row each, in two queries in all."""
        registrations = (
            Registration.objects.filter(event__in=queryset.values("pk"), status=RegistrationStatus.CONFIRMED)
            .select_related("event", "user")
            .order_by("event__starts_at", "event__id", "created_at", "id")
        )
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="registrations.csv"'
        # A byte-order mark lets spreadsheet programs read the zh-Hant titles as UTF-8.
        response.write("\ufeff")
        writer = csv.writer(response)
        writer.writerow(CSV_HEADER)
        for registration in registrations:
            writer.writerow(
                [
                    registration.event.public_id,
                    registration.event.title,
                    registration.user.get_username(),
                    registration.user.email,
                    timezone.localtime(registration.created_at).isoformat(),
                ]
            )
        return response


def _perform(request: HttpRequest, name: str, data: dict[str, object]) -> Performed:
    # The admin site lets in only signed-in staff.
    caller = Caller(visitor=Visitor(user=cast(User, request.user)), channel=Mode.ADMIN)
    return perform(ACTIONS[name], caller, data)


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


@admin.register(Registration)
class RegistrationAdmin(ReadOnlyAdmin):
    list_display = ["user", "event", "status", "created_at", "updated_at"]
    list_filter = ["status", "event"]
    list_select_related = ["user", "event"]
    search_fields = ["user__username", "user__email", "event__title", "event__public_id"]
    date_hierarchy = "created_at"
    actions = ["cancel_registrations"]

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("events.change_registration")

    @admin.action(description=_("Cancel selected registrations"), permissions=["cancel"])
    def cancel_registrations(self, request: HttpRequest, queryset: QuerySet[Registration]) -> None:
        """Each through the organiser's use case: the freed seat goes to the first person waiting."""
        ids = list(queryset.order_by("pk").values_list("pk", flat=True))
        results = _results(
            request,
            [_perform(request, "cancel_attendee_registration", {"registration_id": pk}) for pk in ids],
        )
        count = sum(not result.already_cancelled for result in results)
        self.message_user(
            request,
            ngettext(
                "%(count)d registration was cancelled; its seat goes to whoever waits first.",
                "%(count)d registrations were cancelled; their seats go to whoever waits first.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )


@admin.register(SavedEvent)
class SavedEventAdmin(ReadOnlyAdmin):
    list_display = ["event", "user", "visitor_token", "created_at"]
    list_select_related = ["user", "event"]
    search_fields = ["user__username", "event__title", "event__public_id"]


@admin.register(WaitlistEntry)
class WaitlistEntryAdmin(admin.ModelAdmin):
    list_display = ["event", "user", "status", "joined_at", "expires_at", "ended_at"]
    list_filter = ["status"]
    list_select_related = ["user", "event"]
    search_fields = ["user__username", "user__email", "event__title", "event__public_id"]
    readonly_fields = ["event", "user", "status", "joined_at", "offered_at", "expires_at", "ended_at"]
    date_hierarchy = "joined_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # people join through the use case, which keeps the queue's rules


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
        count = outbox.send_again(queryset.filter(status=NotificationStatus.FAILED))
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
