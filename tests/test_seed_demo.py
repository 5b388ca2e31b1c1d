"""`seed_demo` loads a deterministic, valid catalogue and changes nothing when run again."""

from datetime import datetime
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import Q

from events import demo_data
from events.choices import EventStatus, Level, Location, Price, RegistrationStatus
from events.models import Activity, Event, Registration, SavedEvent, VisitorState

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TAIPEI = ZoneInfo("Asia/Taipei")
# The day the demo data was written: past events are before it, upcoming ones after it (in 2027).
SEED_DAY = datetime(2026, 11, 29, tzinfo=TAIPEI)


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def snapshot() -> dict:
    User = get_user_model()
    return {
        "events": list(Event.objects.order_by("public_id").values()),
        "users": list(User.objects.order_by("username").values()),
        "registrations": list(Registration.objects.order_by("pk").values()),
        "saved": SavedEvent.objects.count(),
        "activity": Activity.objects.count(),
        "state": VisitorState.objects.count(),
    }


def test_seed_demo_twice_changes_nothing():
    first_output = seed()
    before = snapshot()
    second_output = seed()

    assert snapshot() == before
    count = len(demo_data.DEMO_EVENTS)
    assert f"{count} events created, 0 updated, 0 unchanged" in first_output
    assert f"0 events created, 0 updated, {count} unchanged" in second_output
    assert "0 users created, 0 registrations created" in second_output


def test_seed_demo_restores_an_edited_event_and_counts_it_as_updated():
    seed()
    Event.objects.filter(public_id="evt-webmcp-intro").update(title="Edited", capacity=3)

    output = seed()

    event = Event.objects.get(public_id="evt-webmcp-intro")
    assert (event.title, event.capacity) == ("WebMCP 入門工作坊", 40)
    assert "0 events created, 1 updated" in output


def test_seed_demo_does_not_reset_a_changed_password():
    seed()
    user = get_user_model().objects.get(username="demo")
    user.set_password("changed-by-the-person")
    user.save()

    seed()

    user.refresh_from_db()
    assert user.check_password("changed-by-the-person")


def test_seed_demo_creates_the_webmcp_intro_event_exactly():
    seed()
    event = Event.objects.get(public_id="evt-webmcp-intro")
    assert event.title == "WebMCP 入門工作坊"
    assert event.summary == "從語意 HTML 到第一個網站 Tool。"
    assert event.location == Location.TAIPEI
    assert event.price == Price.FREE
    assert event.price_amount is None
    assert event.currency == ""
    assert event.level == Level.BEGINNER
    assert event.starts_at == datetime.fromisoformat("2027-01-23T10:00:00+08:00")
    assert event.ends_at == datetime.fromisoformat("2027-01-23T13:00:00+08:00")
    assert event.capacity == 40
    assert event.status == EventStatus.PUBLISHED


def test_seed_demo_creates_the_demo_accounts():
    seed()
    User = get_user_model()
    demo = User.objects.get(username="demo")
    admin = User.objects.get(username="admin")
    assert demo.check_password("demo-pass-2027")
    assert not demo.is_staff
    assert admin.check_password("admin-pass-2027")
    assert admin.is_staff and admin.is_superuser


def test_seed_demo_has_one_full_upcoming_event_and_one_cancelled_event():
    seed()
    full = [
        event
        for event in Event.objects.published().upcoming(now=SEED_DAY).with_seats()
        if event.capacity is not None and event.confirmed_count >= event.capacity
    ]
    assert [event.public_id for event in full] == ["evt-django-code-review-hours"]
    assert full[0].confirmed_count == full[0].capacity == 2
    assert not Registration.objects.filter(event=full[0], user__username__in=["demo", "admin"]).exists()
    assert Registration.objects.filter(event=full[0], status=RegistrationStatus.CONFIRMED).count() == 2
    assert Event.objects.filter(status=EventStatus.CANCELLED).count() == 1


def test_seed_demo_covers_every_location_level_and_price():
    seed()
    published = Event.objects.published()
    assert Event.objects.count() >= 25
    assert set(published.values_list("location", flat=True)) == set(Location.values)
    assert set(published.values_list("level", flat=True)) == set(Level.values)
    assert set(published.values_list("price", flat=True)) == set(Price.values)
    assert published.past(now=SEED_DAY).count() >= 3
    assert all(event.starts_at.year == 2027 for event in published.upcoming(now=SEED_DAY))
    paid = Event.objects.filter(price=Price.PAID)
    assert paid.exists()
    assert not paid.filter(Q(price_amount__isnull=True) | ~Q(currency="TWD")).exists()
    assert all(amount == int(amount) for amount in paid.values_list("price_amount", flat=True))


def test_seed_demo_taipei_free_beginner_search_starts_with_webmcp_intro():
    seed()
    found = list(
        Event.objects.published()
        .upcoming(now=SEED_DAY)
        .filter(location="taipei", price="free", level="beginner")
        .order_by("starts_at")
        .values_list("public_id", flat=True)
    )
    assert len(found) >= 3
    assert found[0] == "evt-webmcp-intro"


def test_seed_demo_webmcp_query_finds_only_the_intro_workshop():
    seed()
    found = Event.objects.published().upcoming(now=SEED_DAY).matching("WebMCP")
    assert list(found.values_list("public_id", flat=True)) == ["evt-webmcp-intro"]
    # Other WebMCP events exist, but are past, draft or cancelled.
    assert Event.objects.matching("WebMCP").count() > 1


def test_seed_demo_has_no_published_agent_event_in_kaohsiung_paid_advanced():
    seed()
    combination = {"location": "kaohsiung", "price": "paid", "level": "advanced"}
    assert not Event.objects.published().matching("Agent").filter(**combination).exists()
    assert not Event.objects.published().matching("agent").filter(**combination).exists()
    # …while dropping any one condition finds something, so the empty answer is a real decision point.
    upcoming = Event.objects.published().upcoming(now=SEED_DAY)
    assert upcoming.filter(**combination).exists()
    for dropped in combination:
        rest = {name: value for name, value in combination.items() if name != dropped}
        assert upcoming.matching("Agent").filter(**rest).exists(), f"nothing without {dropped}"


@pytest.mark.django_db
def test_seed_demo_has_events_with_questions_and_one_that_requires_approval():
    from events.models import Question
    from events.questions import form_of

    call_command("seed_demo", verbosity=0)
    call_command("seed_demo", verbosity=0)  # twice: the questions are not doubled
    asking = Event.objects.filter(status="published", questions__isnull=False).distinct()
    assert asking.count() >= 3
    specs = [spec for event in asking for spec in form_of(event.question_form)]
    assert any(s.kind == "single_choice" and s.required for s in specs)
    assert any(s.show_if is not None for s in specs)
    assert any(s.kind == "consent" for s in specs)
    assert any(s.show_at_door for s in specs)
    assert Question.objects.count() == len(specs)
    assert Event.objects.filter(status="published", requires_approval=True).exists()
