"""The organisers' admin: who may open it, what it shows, and what its actions do."""

import csv
import io
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.visitors import Visitor
from events import actions
from events.admin import CSV_HEADER
from events.choices import EventStatus, NotificationStatus, RegistrationStatus, WaitlistStatus
from events.models import Activity, CheckIn, Event, Notification, Registration, VisitorState, WaitlistEntry
from tests.factories import ActivityFactory, EventFactory, RegistrationFactory, SavedEventFactory, UserFactory
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EVENT_CHANGELIST = reverse("admin:events_event_changelist")


@pytest.fixture
def organiser():
    return UserFactory(username="organiser", is_staff=True, is_superuser=True)


@pytest.fixture
def admin_client(organiser) -> Client:
    client = Client(headers={"accept-language": "en"})
    client.force_login(organiser)
    return client


def run_action(client: Client, action: str, events: list[Event], url: str = EVENT_CHANGELIST):
    return client.post(url, {"action": action, "_selected_action": [event.pk for event in events]})


#: The refusal an organiser can meet through the event actions: the selection holds only events they
#: manage and each event's own id is the action's only input, so what is refused is an event stored
#: with an id the id rule refuses (the database checks only its prefix; a row made outside the
#: admin's form, e.g. loaded from elsewhere).
ID_REFUSED = ("error", "VALIDATION_ERROR: The input is not valid.")


# ── Access ──────────────────────────────────────────────────────────────────────────────────────


def test_admin_event_changelist_redirects_an_anonymous_visitor_to_the_admin_login():
    response = Client().get(EVENT_CHANGELIST)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_admin_event_changelist_redirects_a_signed_in_non_staff_user_to_the_admin_login(signed_in_client):
    response = signed_in_client.get(EVENT_CHANGELIST)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_admin_site_header_names_the_site(admin_client):
    response = admin_client.get(reverse("admin:index"))
    assert response.status_code == 200
    assert "AgentReady Events admin" in response.text


# ── Event changelist and pages ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "query",
    [
        "",
        "status__exact=published",
        "status__exact=cancelled",
        "when=upcoming",
        "when=past",
        "location__exact=kaohsiung",
        "price__exact=paid",
        "level__exact=advanced",
        "q=WebMCP",
        "q=evt-webmcp-intro",
        "q=venue",
        "o=8",  # sorted by confirmed registrations (an annotation)
        "o=-9",  # sorted by seats left (an annotation)
    ],
)
def test_admin_event_changelist_renders_with_each_filter_search_and_sort(admin_client, event, query):
    EventFactory(past=True, title="Past meetup")
    EventFactory(paid=True, location="kaohsiung", level="advanced", cancelled=True)
    RegistrationFactory(event=event)
    response = admin_client.get(f"{EVENT_CHANGELIST}?{query}")
    assert response.status_code == 200
    assert "?e=1" not in response.get("Location", "")


def test_admin_event_filters_and_search_select_the_right_events(admin_client, event):
    past = EventFactory(past=True, public_id="evt-past-meetup", title="Past meetup")
    kaohsiung = EventFactory(public_id="evt-kaohsiung-talk", location="kaohsiung", venue="駁二 大義倉庫")

    def shown(query: str) -> set[str]:
        response = admin_client.get(f"{EVENT_CHANGELIST}?{query}")
        assert response.status_code == 200
        return {row.public_id for row in response.context["cl"].result_list}

    assert shown("when=upcoming") == {event.public_id, kaohsiung.public_id}
    assert shown("when=past") == {past.public_id}
    assert shown("location__exact=kaohsiung") == {kaohsiung.public_id}
    assert shown("q=大義倉庫") == {kaohsiung.public_id}
    assert shown("q=入門") == {event.public_id}


def test_admin_event_changelist_shows_confirmed_registrations_and_seats_left(admin_client):
    limited = EventFactory(public_id="evt-limited", capacity=5)
    RegistrationFactory.create_batch(2, event=limited)
    RegistrationFactory(event=limited, status=RegistrationStatus.CANCELLED)
    unlimited = EventFactory(public_id="evt-unlimited", capacity=None)
    RegistrationFactory(event=unlimited)

    response = admin_client.get(EVENT_CHANGELIST)

    rows = {row.public_id: row for row in response.context["cl"].result_list}
    assert (rows["evt-limited"].confirmed_count, rows["evt-limited"].seats_left) == (2, 3)
    assert (rows["evt-unlimited"].confirmed_count, rows["evt-unlimited"].seats_left) == (1, None)
    text = response.text
    assert "Confirmed registrations" in text and "Seats left" in text
    assert '<td class="field-seats_left">unlimited</td>' in text
    assert '<td class="field-seats_left">3</td>' in text


def test_admin_event_changelist_query_count_does_not_grow_with_events(admin_client):
    def count_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            response = admin_client.get(EVENT_CHANGELIST)
        assert response.status_code == 200
        return len(queries)

    first = EventFactory(capacity=10)
    RegistrationFactory.create_batch(2, event=first)
    count_queries()  # warm caches shared by every request (content types, permissions)
    with_one = count_queries()

    for _ in range(9):
        more = EventFactory(capacity=10)
        RegistrationFactory.create_batch(2, event=more)
        RegistrationFactory(event=more, status=RegistrationStatus.CANCELLED)
    with_ten = count_queries()

    assert Event.objects.count() == 10
    assert with_ten == with_one


def test_admin_event_add_page_renders_with_an_editable_public_id(admin_client):
    response = admin_client.get(reverse("admin:events_event_add"))
    assert response.status_code == 200
    assert "public_id" in response.context["adminform"].form.fields


def test_admin_event_change_page_renders_with_a_read_only_public_id_and_registrations(admin_client, event):
    RegistrationFactory(event=event, user=UserFactory(username="carol"))
    response = admin_client.get(reverse("admin:events_event_change", args=[event.pk]))
    assert response.status_code == 200
    assert "public_id" not in response.context["adminform"].form.fields
    assert "evt-webmcp-intro" in response.text
    assert "carol" in response.text


def test_admin_event_change_ignores_a_posted_public_id(admin_client, event):
    url, data = change_form(admin_client, event, public_id="evt-renamed", title="Renamed workshop")
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    event.refresh_from_db()
    assert (event.public_id, event.title) == ("evt-webmcp-intro", "Renamed workshop")


#: The management forms of the event page's inlines (its team, its ticket types and questions, and the
#: read-only registrations, waiting list and e-mails).
EMPTY_INLINES = {
    f"{prefix}-{field}": "0"
    for prefix in ("staff", "ticket_types", "questions", "registrations", "waitlist", "notifications")
    for field in ("TOTAL_FORMS", "INITIAL_FORMS")
}


def change_form(client, event, **changes) -> tuple[str, dict]:
    """The event's change page and what saving its form posts: the form as the admin draws it, the
    start and end as its split date and time fields, the inlines left alone, then `changes`."""
    url = reverse("admin:events_event_change", args=[event.pk])
    form = client.get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None}
    starts, ends = timezone.localtime(event.starts_at), timezone.localtime(event.ends_at)
    data.update(
        {
            "starts_at_0": starts.date().isoformat(),
            "starts_at_1": starts.time().isoformat(),
            "ends_at_0": ends.date().isoformat(),
            "ends_at_1": ends.time().isoformat(),
            **EMPTY_INLINES,
            **changes,
        }
    )
    return url, data


def test_raising_capacity_in_the_admin_offers_the_new_seats_to_the_waiting_list(admin_client, mailoutbox):
    event = EventFactory(capacity=1, title="Popular workshop")
    RegistrationFactory(event=event)
    waiting = [UserFactory() for _ in range(3)]
    for user in waiting:
        actions.call("join_waitlist", visitor=Visitor(user=user), channel="ui", event_id=event.public_id)
    url, data = change_form(admin_client, event, capacity="3")
    response = admin_client.post(url, data, follow=True)
    assert "2 seats were offered to the waiting list" in response.content.decode()
    statuses = [WaitlistEntry.objects.get(user=user).status for user in waiting]
    assert statuses == [WaitlistStatus.OFFERED, WaitlistStatus.OFFERED, WaitlistStatus.WAITING]
    page = admin_client.get(url).content.decode()
    assert page.count("Offered a seat") >= 2  # the inline shows the queue
    run_tasks()
    assert sorted(m.to[0] for m in mailoutbox) == sorted(u.email for u in waiting[:2])
    assert "Sent" in admin_client.get(url).content.decode()  # the e-mails, in the event's page


def test_a_refused_offer_of_the_raised_seats_is_an_error_message_and_the_change_is_kept(admin_client):
    event = EventFactory(public_id="evt-Legacy_1", capacity=1)  # an id the id rule refuses (ID_REFUSED)
    url, data = change_form(admin_client, event, capacity="2")
    response = admin_client.post(url, data, follow=True)
    said = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert ID_REFUSED in said
    event.refresh_from_db()
    assert event.capacity == 2
    assert Activity.objects.get(action="offer_free_seats").outcome == "VALIDATION_ERROR"


def test_failed_emails_are_listed_and_can_be_sent_again(admin_client, mailoutbox):
    event = EventFactory()
    user = UserFactory()
    actions.call("register_event", visitor=Visitor(user=user), channel="ui", event_id=event.public_id)
    run_tasks()
    mailoutbox.clear()
    notification = Notification.objects.get()
    Notification.objects.filter(pk=notification.pk).update(
        status=NotificationStatus.FAILED, attempts=9, last_error="SMTPServerDisconnected: gone"
    )
    changelist = reverse("admin:events_notification_changelist")
    html = admin_client.get(changelist, {"status__exact": "failed"}).content.decode()
    assert user.email in html
    admin_client.post(
        changelist, {"action": "send_again", "_selected_action": [notification.pk]}, follow=True
    )
    run_tasks()
    notification.refresh_from_db()
    assert (notification.status, notification.attempts) == (NotificationStatus.SENT, 1)
    assert [m.to for m in mailoutbox] == [[user.email]]


def test_admin_event_cannot_be_deleted(admin_client, event):
    response = admin_client.get(reverse("admin:events_event_delete", args=[event.pk]))
    assert response.status_code == 403
    actions = admin_client.get(EVENT_CHANGELIST).context["action_form"].fields["action"].choices
    assert "delete_selected" not in [name for name, _ in actions]
    assert Event.objects.filter(pk=event.pk).exists()


# ── Event actions ───────────────────────────────────────────────────────────────────────────────


def test_admin_publish_action_publishes_the_selected_events_only(admin_client):
    drafts = EventFactory.create_batch(2, draft=True)
    untouched = EventFactory(draft=True)
    response = run_action(admin_client, "publish", drafts)
    assert response.status_code == 302
    assert set(Event.objects.filter(pk__in=[e.pk for e in drafts]).values_list("status", flat=True)) == {
        EventStatus.PUBLISHED
    }
    untouched.refresh_from_db()
    assert untouched.status == EventStatus.DRAFT
    messages = [str(message) for message in admin_client.get(EVENT_CHANGELIST).context["messages"]]
    assert "2 events were published." in messages


def test_admin_unpublish_action_moves_events_back_to_draft(admin_client, event):
    run_action(admin_client, "unpublish", [event])
    event.refresh_from_db()
    assert event.status == EventStatus.DRAFT


def test_admin_cancel_action_cancels_events(admin_client, event):
    other = EventFactory(draft=True)
    run_action(admin_client, "cancel", [event, other])
    assert set(Event.objects.values_list("status", flat=True)) == {EventStatus.CANCELLED}


def test_admin_cancel_goes_through_the_use_case_and_tells_every_registrant(
    admin_client, organiser, event, mailoutbox
):
    holders = [RegistrationFactory(event=event).user for _ in range(2)]
    gone = RegistrationFactory(event=event, status=RegistrationStatus.CANCELLED)
    run_action(admin_client, "cancel", [event])
    run_tasks()
    statuses = set(Registration.objects.filter(event=event).values_list("status", flat=True))
    assert statuses == {RegistrationStatus.CANCELLED}
    assert sorted(m.to[0] for m in mailoutbox) == sorted(user.email for user in holders)
    assert gone.user.email not in [m.to[0] for m in mailoutbox]
    assert all(event.title in m.subject for m in mailoutbox)
    row = Activity.objects.get(action="cancel_event")
    assert (row.mode, row.outcome, row.user, row.event_id) == ("admin", "OK", organiser, event.pk)
    for user in holders:  # their pages and tools follow: each holder's state changed once
        assert VisitorState.objects.get(visitor_key=f"user:{user.pk}").version == 1


@pytest.mark.parametrize(
    ("action", "use_case"), [("publish", "publish_event"), ("unpublish", "unpublish_event")]
)
def test_admin_publish_and_unpublish_are_recorded_as_the_organisers_activity(admin_client, action, use_case):
    event = EventFactory(draft=action == "publish")
    run_action(admin_client, action, [event])
    run_action(admin_client, action, [event])  # again: nothing changes
    rows = Activity.objects.filter(action=use_case).order_by("id")
    assert [(row.mode, row.outcome) for row in rows] == [("admin", "OK"), ("admin", "UNCHANGED")]


def test_the_status_is_changed_by_the_actions_only(admin_client, event):
    html = admin_client.get(reverse("admin:events_event_change", args=[event.pk])).content.decode()
    assert 'name="status"' not in html


def test_admin_action_works_while_sorted_by_an_annotation(admin_client, event):
    RegistrationFactory(event=event)
    response = run_action(admin_client, "cancel", [event], url=f"{EVENT_CHANGELIST}?o=8")
    assert response.status_code == 302
    event.refresh_from_db()
    assert event.status == EventStatus.CANCELLED


@pytest.mark.parametrize(
    ("action", "use_case", "status"),
    [
        ("publish", "publish_event", EventStatus.DRAFT),
        ("unpublish", "unpublish_event", EventStatus.PUBLISHED),
        ("cancel", "cancel_event", EventStatus.PUBLISHED),
    ],
)
def test_admin_event_action_on_an_event_whose_id_breaks_the_id_rule_is_a_validation_error_message(
    admin_client, action, use_case, status
):
    event = EventFactory(public_id="evt-Legacy_1", status=status)
    response = admin_client.post(
        EVENT_CHANGELIST, {"action": action, "_selected_action": [event.pk]}, follow=True
    )
    said = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert said == [ID_REFUSED]  # the refusal alone: no "0 events were …" beside it
    event.refresh_from_db()
    assert event.status == status
    assert list(Activity.objects.values_list("action", "mode", "outcome")) == [
        (use_case, "admin", "VALIDATION_ERROR")
    ]


# ── CSV export ──────────────────────────────────────────────────────────────────────────────────


def test_admin_export_registrations_csv_contains_exactly_the_confirmed_registrations(admin_client, event):
    other = EventFactory(public_id="evt-other", title="Other event")
    not_selected = EventFactory(public_id="evt-not-selected")
    for name in ("amy", "ben"):
        RegistrationFactory(event=event, user=UserFactory(username=name))
    RegistrationFactory(event=event, user=UserFactory(username="cat"), status=RegistrationStatus.CANCELLED)
    # Cancelled, then registered again: exported once.
    dan = UserFactory(username="dan")
    RegistrationFactory(event=other, user=dan, status=RegistrationStatus.CANCELLED)
    RegistrationFactory(event=other, user=dan)
    RegistrationFactory(event=other, user=UserFactory(username="eve"), status=RegistrationStatus.CANCELLED)
    RegistrationFactory(event=not_selected, user=UserFactory(username="fay"))

    response = run_action(admin_client, "export_registrations_csv", [event, other])

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0] == CSV_HEADER
    assert rows[0][:5] == ["event id", "event title", "username", "email", "registered at"]
    assert rows[0][5:8] == ["checked in", "checked in at", "checked in by"]
    body = rows[1:]
    assert sorted((row[0], row[2]) for row in body) == [
        ("evt-other", "dan"),
        ("evt-webmcp-intro", "amy"),
        ("evt-webmcp-intro", "ben"),
    ]
    amy = next(row for row in body if row[2] == "amy")
    assert amy[1] == "WebMCP 入門工作坊"
    assert amy[3] == "amy@example.com"
    assert amy[4].endswith("+08:00")


def test_admin_export_registrations_csv_neutralises_formulas_in_every_column(admin_client, event):
    """A username may start with `+`, `-` or `@` and an address with `=`, `+` or `-`; a title or a
    staff member's name with anything: no cell reaches the spreadsheet as a formula."""
    event.title = '=HYPERLINK("http://x.example","title")'
    event.save()
    attendee = UserFactory(username="@SUM(1+1)", email="=cmd|' /C calc'!A0@example.com")
    registration = RegistrationFactory(event=event, user=attendee)
    staff = UserFactory(username="-door", first_name="+Door", last_name="Keeper")
    CheckIn.objects.create(registration=registration, staff=staff, checked_in_at=timezone.now())

    response = run_action(admin_client, "export_registrations_csv", [event])
    [row] = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))[1:]
    assert row[1] == '\'=HYPERLINK("http://x.example","title")'
    assert row[2] == "'@SUM(1+1)"
    assert row[3] == "'=cmd|' /C calc'!A0@example.com"
    assert row[7].startswith("'+Door")
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row)


def test_admin_export_registrations_csv_query_count_does_not_grow_with_rows(admin_client, event):
    def export_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            response = run_action(admin_client, "export_registrations_csv", [event])
        assert response.status_code == 200
        return len(queries)

    RegistrationFactory(event=event)
    export_queries()
    with_one = export_queries()
    RegistrationFactory.create_batch(5, event=event)
    assert export_queries() == with_one


# ── Registration, SavedEvent and Activity admins ────────────────────────────────────────────────


def test_admin_registration_changelist_renders_filtered_and_searched(admin_client, event):
    RegistrationFactory(event=event, user=UserFactory(username="gina"))
    RegistrationFactory(user=UserFactory(username="hank"))
    url = reverse("admin:events_registration_changelist")
    for query in ("", "status__exact=confirmed", f"event__id__exact={event.pk}", "q=gina", "q=WebMCP"):
        response = admin_client.get(f"{url}?{query}")
        assert response.status_code == 200, query
    response = admin_client.get(f"{url}?q=gina")
    assert [str(row.user) for row in response.context["cl"].result_list] == ["gina"]


def test_admin_saved_event_changelist_renders(admin_client):
    SavedEventFactory()
    SavedEventFactory(user=None, visitor_token="anon")
    response = admin_client.get(reverse("admin:events_savedevent_changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count == 2


def test_admin_activity_changelist_renders_a_summary_of_the_filtered_rows(admin_client, event):
    ActivityFactory.create_batch(3, action="search_events", mode="agent", outcome="OK")
    ActivityFactory(action="search_events", mode="ui", outcome="OK")
    ActivityFactory(action="register_event", mode="agent", outcome="EVENT_FULL", event=event)
    url = reverse("admin:events_activity_changelist")

    response = admin_client.get(url)

    assert response.status_code == 200
    summary = {
        (row["action"], row["mode"], row["outcome"]): row["count"] for row in response.context["summary"]
    }
    assert summary == {
        ("register_event", "agent", "EVENT_FULL"): 1,
        ("search_events", "agent", "OK"): 3,
        ("search_events", "ui", "OK"): 1,
    }
    assert 'id="activity-summary"' in response.text
    assert "Agent tool" in response.text

    filtered = admin_client.get(f"{url}?mode__exact=agent")
    assert {(row["action"], row["count"]) for row in filtered.context["summary"]} == {
        ("register_event", 1),
        ("search_events", 3),
    }
    for query in ("action=search_events", "outcome=OK", "created_at__year=2026", "q=register"):
        assert admin_client.get(f"{url}?{query}").status_code == 200, query


def test_admin_activity_is_read_only(admin_client):
    activity = ActivityFactory()
    assert admin_client.get(reverse("admin:events_activity_add")).status_code == 403
    assert admin_client.get(reverse("admin:events_activity_delete", args=[activity.pk])).status_code == 403
    change_url = reverse("admin:events_activity_change", args=[activity.pk])
    view = admin_client.get(change_url)
    assert view.status_code == 200
    assert not view.context["adminform"].form.fields
    admin_client.post(change_url, {"action": "tampered", "mode": "api", "outcome": "X"})
    activity.refresh_from_db()
    assert activity.action == "search_events"


# ── Registrations and saves change only through the use cases ────────────────────────────────────

REGISTRATION_CHANGELIST = reverse("admin:events_registration_changelist")


def test_adding_a_confirmed_registration_to_a_full_event_in_the_admin_is_refused(admin_client):
    event = EventFactory(capacity=2)
    RegistrationFactory.create_batch(2, event=event)
    newcomer = UserFactory()
    form = {"user": newcomer.pk, "event": event.pk, "status": RegistrationStatus.CONFIRMED}
    assert admin_client.get(reverse("admin:events_registration_add")).status_code == 403
    assert admin_client.post(reverse("admin:events_registration_add"), form).status_code == 403
    assert Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).count() == 2
    assert not Registration.objects.filter(user=newcomer).exists()


def test_a_registration_and_a_save_cannot_be_edited_or_deleted_in_the_admin(admin_client):
    registration = RegistrationFactory()
    save = SavedEventFactory()
    change = reverse("admin:events_registration_change", args=[registration.pk])
    response = admin_client.post(
        change,
        {
            "user": registration.user.pk,
            "event": registration.event.pk,
            "status": RegistrationStatus.CANCELLED,
        },
    )
    assert response.status_code == 403
    delete = reverse("admin:events_registration_delete", args=[registration.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    registration.refresh_from_db()
    assert registration.status == RegistrationStatus.CONFIRMED
    assert admin_client.get(change).status_code == 200  # still shown, read-only
    saved_change = reverse("admin:events_savedevent_change", args=[save.pk])
    assert admin_client.post(saved_change, {"event": save.event.pk}).status_code == 403
    assert (
        admin_client.post(
            reverse("admin:events_savedevent_delete", args=[save.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    assert admin_client.get(reverse("admin:events_savedevent_add")).status_code == 403


def test_cancelling_a_registration_from_the_admin_offers_the_seat_to_the_first_person_waiting(
    admin_client, organiser
):
    event = EventFactory(capacity=1)
    holder = RegistrationFactory(event=event)
    first, second = UserFactory(), UserFactory()
    for person in (first, second):
        actions.call("join_waitlist", visitor=Visitor(user=person), channel="ui", event_id=event.public_id)
    before = Activity.objects.count()
    response = admin_client.post(
        REGISTRATION_CHANGELIST, {"action": "cancel_registrations", "_selected_action": [holder.pk]}
    )
    assert response.status_code == 302
    holder.refresh_from_db()
    assert holder.status == RegistrationStatus.CANCELLED
    statuses = dict(WaitlistEntry.objects.values_list("user", "status"))
    assert statuses == {first.pk: WaitlistStatus.OFFERED, second.pk: WaitlistStatus.WAITING}
    assert VisitorState.objects.get(visitor_key=f"user:{holder.user.pk}").version == 1
    row = Activity.objects.order_by("-id").first()
    assert Activity.objects.count() == before + 1
    assert (row.action, row.mode, row.outcome, row.user, row.event) == (
        "cancel_attendee_registration",
        "admin",
        "OK",
        organiser,
        event,
    )
    run_tasks()
    assert Notification.objects.get(user=first).status == NotificationStatus.SENT


def test_cancelling_a_cancelled_registration_from_the_admin_changes_nothing(admin_client):
    registration = RegistrationFactory(status=RegistrationStatus.CANCELLED)
    admin_client.post(
        REGISTRATION_CHANGELIST, {"action": "cancel_registrations", "_selected_action": [registration.pk]}
    )
    assert Activity.objects.get().outcome == "ALREADY_CANCELLED"


def test_cancelling_a_registration_of_a_started_event_from_the_admin_is_an_error_message(admin_client):
    registration = RegistrationFactory(event=EventFactory(past=True))
    response = admin_client.post(
        REGISTRATION_CHANGELIST,
        {"action": "cancel_registrations", "_selected_action": [registration.pk]},
        follow=True,
    )
    said = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert said == [
        (
            "error",
            "REGISTRATION_CLOSED: The event has started; its registrations can no longer be cancelled.",
        ),
    ]
    registration.refresh_from_db()
    assert registration.status == RegistrationStatus.CONFIRMED
    assert Activity.objects.get().outcome == "REGISTRATION_CLOSED"


def test_staff_without_the_change_permission_cannot_cancel_registrations_from_the_admin():
    from django.contrib.auth.models import Permission

    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_registration"))
    client = Client(headers={"accept-language": "en"})
    client.force_login(viewer)
    registration = RegistrationFactory()
    response = client.post(
        REGISTRATION_CHANGELIST, {"action": "cancel_registrations", "_selected_action": [registration.pk]}
    )
    assert response.status_code in (200, 302)  # the action is not offered to them
    registration.refresh_from_db()
    assert registration.status == RegistrationStatus.CONFIRMED
    assert not Activity.objects.exists()


def test_the_admin_lists_connected_clients_and_their_tokens_without_the_secrets(admin_client, user):
    from oauth2_provider.models import get_access_token_model, get_application_model, set_token_value

    application = get_application_model().objects.create(
        name="Claude Code",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:5000/callback",
    )
    token = get_access_token_model()(
        user=user, application=application, scope="events:read", expires=timezone.now() + timedelta(hours=1)
    )
    set_token_value(token, "secret-access-token-value")  # the toolkit keeps only its checksum
    token.save()
    applications = admin_client.get("/admin/oauth2_provider/application/")
    tokens = admin_client.get("/admin/oauth2_provider/accesstoken/")
    assert applications.status_code == tokens.status_code == 200
    assert "Claude Code" in applications.content.decode()
    assert "secret-access-token-value" not in tokens.content.decode()
    assert admin_client.get("/admin/oauth2_provider/idtoken/").status_code == 404


# ── Each event's managers, its door and its team ────────────────────────────────────────────────


def _registered(event: Event, username: str, **names) -> Registration:
    person = UserFactory(username=username, **names)
    actions.call("register_event", visitor=Visitor(user=person), channel="ui", event_id=event.public_id)
    return Registration.objects.get(user=person, event=event, status=RegistrationStatus.CONFIRMED)


@pytest.fixture
def door_team(event):
    """Two events: `event` is Mia's to manage, with Mei at its door, Ada checked in and Bob not yet;
    the other (Cy registered) is someone else's."""
    from django.core.management import call_command

    from events.choices import StaffRole
    from events.models import EventStaff

    other = EventFactory(public_id="evt-not-mine", title="Someone else's event")
    manager = UserFactory(username="mia", first_name="Mia")
    call_command("add_event_staff", event.public_id, "mia", "--role", "manager", stdout=io.StringIO())
    door = UserFactory(username="mei", first_name="Mei")
    EventStaff.objects.create(event=event, user=door, role=StaffRole.DOOR)
    ada = _registered(event, "ada", first_name="Ada", last_name="Lovelace")
    bob = _registered(event, "bob")
    cy = _registered(other, "cy")
    actions.call(
        "check_in_attendee",
        visitor=Visitor(user=door),
        channel="api",
        event_id=event.public_id,
        ticket=ada.ticket_code,
    )
    client = Client(headers={"accept-language": "en"})
    client.force_login(manager)
    return {"event": event, "other": other, "client": client, "ada": ada, "bob": bob, "cy": cy}


def test_a_manager_sees_only_their_events_and_another_events_page_is_not_found(door_team):
    event, other, client = door_team["event"], door_team["other"], door_team["client"]
    listed = client.get(EVENT_CHANGELIST)
    assert listed.status_code == 200
    assert [row.public_id for row in listed.context["cl"].result_list] == [event.public_id]
    assert "Someone else" not in listed.text
    assert client.get(reverse("admin:events_event_change", args=[event.pk])).status_code == 200
    for name in ("admin:events_event_change", "admin:events_event_history"):
        assert client.get(reverse(name, args=[other.pk])).status_code == 404, name
    before = other.title
    form = {"title": "Taken over", **EMPTY_INLINES}
    assert client.post(reverse("admin:events_event_change", args=[other.pk]), form).status_code == 404
    other.refresh_from_db()
    assert other.title == before
    assert client.get(reverse("admin:events_event_add")).status_code == 403  # managers add no events


def test_a_manager_sees_only_their_events_registrations_and_check_ins(door_team):
    client, ada, cy = door_team["client"], door_team["ada"], door_team["cy"]
    registrations = client.get(REGISTRATION_CHANGELIST)
    assert {str(row.user) for row in registrations.context["cl"].result_list} == {"ada", "bob"}
    # The event filter offers their events only.
    assert "evt-not-mine" not in registrations.text and "Someone else" not in registrations.text
    assert client.get(reverse("admin:events_registration_change", args=[ada.pk])).status_code == 200
    assert client.get(reverse("admin:events_registration_change", args=[cy.pk])).status_code == 404
    check_ins = client.get(reverse("admin:events_checkin_changelist"))
    assert [row.registration for row in check_ins.context["cl"].result_list] == [ada]
    assert "Ada Lovelace" in check_ins.text and "Mei" in check_ins.text
    exported = run_action(client, "export_registrations_csv", [door_team["event"], door_team["other"]])
    rows = list(csv.reader(io.StringIO(exported.content.decode("utf-8-sig"))))[1:]
    assert sorted(row[2] for row in rows) == ["ada", "bob"]  # the other event was not theirs to select


def test_the_registration_list_shows_who_is_in_since_when_and_by_whom(door_team, admin_client):
    event, ada = door_team["event"], door_team["ada"]
    url = f"{REGISTRATION_CHANGELIST}?event__id__exact={event.pk}"
    response = admin_client.get(url)
    rows = {str(row.user): row for row in response.context["cl"].result_list}
    assert set(rows) == {"ada", "bob"}
    assert "Is checked in" in response.text and "Checked in at" in response.text
    assert '<td class="field-checked_in_by">Mei</td>' in response.text
    assert '<td class="field-checked_in_by">—</td>' in response.text
    checked_in = admin_client.get(f"{url}&checked_in=yes").context["cl"].result_list
    assert [str(row.user) for row in checked_in] == ["ada"]
    waiting = admin_client.get(f"{url}&checked_in=no").context["cl"].result_list
    assert [str(row.user) for row in waiting] == ["bob"]
    page = admin_client.get(reverse("admin:events_event_change", args=[event.pk])).text
    assert "1 of 2 confirmed attendees are checked in." in page
    assert f"?event__id__exact={event.pk}" in page
    assert ada.check_ins.get().staff.first_name == "Mei"


def test_the_csv_export_says_who_is_checked_in_when_and_by_whom(door_team, admin_client):
    from events.models import CheckIn

    response = run_action(admin_client, "export_registrations_csv", [door_team["event"]])
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0][5:8] == ["checked in", "checked in at", "checked in by"]
    by_user = {row[2]: row for row in rows[1:]}
    check_in = CheckIn.objects.get(registration=door_team["ada"])
    assert by_user["ada"][5:8] == ["yes", timezone.localtime(check_in.checked_in_at).isoformat(), "Mei"]
    assert by_user["bob"][5:8] == ["no", "", ""]


def test_ticket_codes_are_on_no_admin_page_and_no_list_filters_on_them(door_team, admin_client):
    from events.models import CheckIn

    ada = door_team["ada"]
    check_in = CheckIn.objects.get(registration=ada)
    pages = [
        REGISTRATION_CHANGELIST,
        f"{REGISTRATION_CHANGELIST}?q=ada",
        reverse("admin:events_registration_change", args=[ada.pk]),
        reverse("admin:events_event_change", args=[door_team["event"].pk]),
        reverse("admin:events_checkin_changelist"),
        reverse("admin:events_checkin_change", args=[check_in.pk]),
    ]
    codes = [registration.ticket_code for registration in (ada, door_team["bob"], door_team["cy"])]
    for client in (admin_client, door_team["client"]):
        for url in pages:
            response = client.get(url)
            assert response.status_code == 200, url
            assert not any(code in response.text or code.lower() in response.text for code in codes), url
    probe = admin_client.get(f"{REGISTRATION_CHANGELIST}?ticket_code__startswith={ada.ticket_code[:1]}")
    assert probe.status_code == 400  # a filter on the code would tell it, a character at a time
    assert admin_client.get(f"{REGISTRATION_CHANGELIST}?q={ada.ticket_code}").context["cl"].result_count == 0


def test_a_manager_sees_the_team_and_only_a_superuser_changes_it(door_team, admin_client):
    from django.contrib.auth.models import Group

    from events.choices import MANAGERS_GROUP
    from events.models import EventStaff

    event, client = door_team["event"], door_team["client"]
    url = reverse("admin:events_event_change", args=[event.pk])
    seen = client.get(url)
    assert "Mei" in seen.text or "mei" in seen.text
    staff_formset = next(f for f in seen.context["inline_admin_formsets"] if f.formset.model is EventStaff)
    assert not staff_formset.has_add_permission and not staff_formset.has_change_permission

    newcomer = UserFactory(username="nina")
    members = list(EventStaff.objects.filter(event=event).order_by("role", "added_at", "id"))
    url, data = change_form(
        admin_client,
        event,
        **{"staff-TOTAL_FORMS": str(len(members) + 1), "staff-INITIAL_FORMS": str(len(members))},
    )
    for n, member in enumerate(members):
        data.update(
            {f"staff-{n}-id": member.pk, f"staff-{n}-user": member.user_id, f"staff-{n}-role": member.role}
        )
        data[f"staff-{n}-event"] = event.pk
    data.update({f"staff-{len(members)}-user": newcomer.pk, f"staff-{len(members)}-role": "manager"})
    data["registrations-TOTAL_FORMS"] = data["registrations-INITIAL_FORMS"] = "2"
    for n, registration in enumerate(Registration.objects.filter(event=event).order_by("-created_at", "-id")):
        data[f"registrations-{n}-id"] = registration.pk
        data[f"registrations-{n}-event"] = event.pk
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    assert EventStaff.objects.get(event=event, user=newcomer).role == "manager"
    newcomer.refresh_from_db()
    assert newcomer.is_staff and newcomer.groups.filter(name=MANAGERS_GROUP).exists()
    assert Group.objects.filter(name=MANAGERS_GROUP).count() == 1


def test_a_manager_cancels_a_registration_of_their_event_through_the_use_case(door_team):
    client, bob, cy = door_team["client"], door_team["bob"], door_team["cy"]
    response = client.post(
        REGISTRATION_CHANGELIST,
        {"action": "cancel_registrations", "_selected_action": [bob.pk, cy.pk]},
        follow=True,
    )
    assert response.redirect_chain == [(REGISTRATION_CHANGELIST, 302)]
    # Cy's registration (another event's) is not in the manager's selection at all: no refusal, and
    # no message that tells of it; the count is of theirs alone.
    said = [(message.level_tag, str(message)) for message in response.context["messages"]]
    assert said == [("success", "1 registration was cancelled; its seat goes to whoever waits first.")]
    bob.refresh_from_db()
    cy.refresh_from_db()
    assert (bob.status, cy.status) == (RegistrationStatus.CANCELLED, RegistrationStatus.CONFIRMED)
    assert Activity.objects.filter(action="cancel_attendee_registration", mode="admin").count() == 1


# ── Rows the use cases alone change: the waiting list, registrations, saves ─────────────────────


def _waiting(event: Event) -> WaitlistEntry:
    """Someone on `event`'s waiting list, joined the site's way (the event is made full first)."""
    event.capacity = 1
    event.save(update_fields=["capacity"])
    RegistrationFactory(event=event, user=UserFactory(username="holder"))
    person = UserFactory(username="waiter")
    actions.call("join_waitlist", visitor=Visitor(user=person), channel="ui", event_id=event.public_id)
    return WaitlistEntry.objects.get(user=person, event=event)


def _assert_waiting_list_entry_cannot_be_changed_or_deleted(client: Client, entry: WaitlistEntry) -> None:
    change = reverse("admin:events_waitlistentry_change", args=[entry.pk])
    delete = reverse("admin:events_waitlistentry_delete", args=[entry.pk])
    before = Activity.objects.count()
    form = {"event": entry.event.pk, "user": entry.user.pk, "status": WaitlistStatus.LEFT}
    assert client.post(change, form).status_code == 403
    assert client.get(delete).status_code == 403
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert client.get(reverse("admin:events_waitlistentry_add")).status_code == 403
    entry.refresh_from_db()
    assert entry.status == WaitlistStatus.WAITING and entry.ended_at is None
    assert Activity.objects.count() == before


def test_a_waiting_list_entry_cannot_be_changed_or_deleted_by_a_superuser(admin_client, event):
    entry = _waiting(event)
    _assert_waiting_list_entry_cannot_be_changed_or_deleted(admin_client, entry)
    page = admin_client.get(reverse("admin:events_waitlistentry_change", args=[entry.pk]))
    assert page.status_code == 200  # still shown, read-only
    assert not page.context["has_change_permission"] and not page.context["has_delete_permission"]


def test_a_waiting_list_entry_cannot_be_changed_or_deleted_by_the_events_manager(door_team):
    entry = _waiting(door_team["event"])  # the manager's own event
    _assert_waiting_list_entry_cannot_be_changed_or_deleted(door_team["client"], entry)


@pytest.mark.parametrize("model", ["registration", "savedevent", "waitlistentry"])
def test_no_bulk_delete_is_offered_for_rows_the_use_cases_change(admin_client, event, model):
    row = {
        "registration": lambda: RegistrationFactory(event=event),
        "savedevent": lambda: SavedEventFactory(event=event),
        "waitlistentry": lambda: _waiting(event),
    }[model]()
    changelist = reverse(f"admin:events_{model}_changelist")
    response = admin_client.get(changelist)
    assert response.status_code == 200
    action_form = response.context["action_form"]
    offered = [name for name, _ in action_form.fields["action"].choices] if action_form else []
    assert "delete_selected" not in offered
    admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert type(row).objects.filter(pk=row.pk).exists()


# ── Writes through rows: the team, the event form, "send again" ────────────────────────────────


def test_the_team_inline_adds_and_removes_people_through_their_actions(admin_client, organiser):
    from events.models import EventStaff

    event = EventFactory(capacity=5)
    door, manager = UserFactory(username="dora"), UserFactory(username="max")
    EventStaff.objects.create(event=event, user=door, role="door")
    url, data = change_form(admin_client, event, **{"staff-TOTAL_FORMS": "2", "staff-INITIAL_FORMS": "1"})
    member = EventStaff.objects.get(event=event, user=door)
    data.update({"staff-0-id": member.pk, "staff-0-user": door.pk, "staff-0-role": "door"})
    data.update({"staff-0-event": event.pk, "staff-0-DELETE": "on"})
    data.update({"staff-1-user": manager.pk, "staff-1-role": "manager"})
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context and response.context["adminform"].form.errors
    assert list(EventStaff.objects.filter(event=event).values_list("user__username", "role")) == [
        ("max", "manager")
    ]
    manager.refresh_from_db()
    assert manager.is_staff
    rows = Activity.objects.filter(action__endswith="_event_staff").order_by("id")
    assert list(rows.values_list("action", "mode", "outcome", "user", "event")) == [
        ("remove_event_staff", "admin", "OK", organiser.pk, event.pk),
        ("add_event_staff", "admin", "OK", organiser.pk, event.pk),
    ]


def test_the_event_form_changes_the_event_through_its_action(admin_client, organiser):
    event = EventFactory(capacity=5, title="Before")
    url, data = change_form(admin_client, event, title="After")
    assert admin_client.post(url, data).status_code == 302
    event.refresh_from_db()
    assert event.title == "After"
    row = Activity.objects.get(action="edit_event")
    assert (row.mode, row.outcome, row.user, row.event) == ("admin", "OK", organiser, event)


def test_sending_failed_emails_again_leaves_a_row_for_each(admin_client, organiser):
    event = EventFactory()
    actions.call(
        "register_event", visitor=Visitor(user=UserFactory()), channel="ui", event_id=event.public_id
    )
    run_tasks()
    notification = Notification.objects.get()
    Notification.objects.filter(pk=notification.pk).update(status=NotificationStatus.FAILED)
    changelist = reverse("admin:events_notification_changelist")
    admin_client.post(changelist, {"action": "send_again", "_selected_action": [notification.pk]})
    row = Activity.objects.get(action="resend_notification")
    assert (row.mode, row.outcome, row.user, row.event) == ("admin", "OK", organiser, event)
    assert Notification.objects.get().status == NotificationStatus.PENDING
