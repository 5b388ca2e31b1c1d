"""The database itself refuses bad rows: every constraint is exercised with a write that skips full_clean."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from events.choices import RegistrationStatus
from events.models import Activity, Event, Registration, RetiredEventId, SavedEvent
from tests.factories import EventFactory, RegistrationFactory, SavedEventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def assert_rejected(write) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        write()


def update_event(event: Event, **fields) -> None:
    Event.objects.filter(pk=event.pk).update(**fields)


# ── Event ────────────────────────────────────────────────────────────────────────────────────────


def test_valid_event_rows_are_accepted():
    free = EventFactory()
    paid = EventFactory(paid=True, capacity=1)
    assert Event.objects.filter(pk__in=[free.pk, paid.pk]).count() == 2


@pytest.mark.parametrize("offset", [timedelta(0), timedelta(hours=-1)])
def test_event_ending_at_or_before_its_start_is_rejected(offset):
    event = EventFactory()
    assert_rejected(lambda: update_event(event, ends_at=event.starts_at + offset))


def test_paid_event_without_amount_is_rejected():
    event = EventFactory()
    assert_rejected(lambda: update_event(event, price="paid", price_amount=None, currency="TWD"))


def test_paid_event_with_zero_amount_is_rejected():
    event = EventFactory()
    assert_rejected(lambda: update_event(event, price="paid", price_amount=0, currency="TWD"))


def test_paid_event_without_currency_is_rejected():
    event = EventFactory()
    assert_rejected(lambda: update_event(event, price="paid", price_amount=500, currency=""))


def test_free_event_with_an_amount_is_rejected():
    event = EventFactory()
    assert_rejected(lambda: update_event(event, price_amount=100))


def test_free_event_with_a_currency_is_rejected():
    event = EventFactory()
    assert_rejected(lambda: update_event(event, currency="TWD"))


def test_event_capacity_zero_is_rejected_but_empty_means_unlimited():
    event = EventFactory(capacity=5)
    assert_rejected(lambda: update_event(event, capacity=0))
    update_event(event, capacity=None)
    event.refresh_from_db()
    assert event.capacity is None


def test_event_public_id_without_prefix_is_rejected():
    event = EventFactory()
    assert_rejected(lambda: update_event(event, public_id="webmcp-intro"))
    assert_rejected(lambda: Event.objects.bulk_create([EventFactory.build(public_id="event-1")]))


def test_duplicate_public_id_is_rejected():
    EventFactory(public_id="evt-duplicate")
    assert_rejected(lambda: Event.objects.bulk_create([EventFactory.build(public_id="evt-duplicate")]))


@pytest.mark.parametrize(
    ("field", "value"),
    [("location", "tainan"), ("level", "expert"), ("status", "archived"), ("price", "donation")],
)
def test_event_choice_outside_its_values_is_rejected(field, value):
    event = EventFactory()
    assert_rejected(lambda: update_event(event, **{field: value}))


def test_deleting_an_event_retires_its_public_id():
    event = EventFactory(public_id="evt-short-lived")
    event.delete()
    assert RetiredEventId.objects.filter(public_id="evt-short-lived").exists()
    again = EventFactory.build(public_id="evt-short-lived")
    with pytest.raises(ValidationError) as raised:
        again.full_clean()
    assert "public_id" in raised.value.message_dict


def test_full_clean_rejects_a_paid_event_without_amount():
    with pytest.raises(ValidationError):
        EventFactory.build(price="paid", price_amount=None, currency="TWD").full_clean()


def test_a_never_used_public_id_passes_full_clean():
    EventFactory.build(public_id="evt-brand-new").full_clean()


# ── Registration ────────────────────────────────────────────────────────────────────────────────


def test_two_confirmed_registrations_for_the_same_user_and_event_are_rejected():
    registration = RegistrationFactory()
    assert_rejected(
        lambda: Registration.objects.create(
            user=registration.user, event=registration.event, status=RegistrationStatus.CONFIRMED
        )
    )


def test_a_cancelled_and_a_confirmed_registration_may_coexist():
    cancelled = RegistrationFactory(status=RegistrationStatus.CANCELLED)
    RegistrationFactory(user=cancelled.user, event=cancelled.event, status=RegistrationStatus.CONFIRMED)
    RegistrationFactory(user=cancelled.user, event=cancelled.event, status=RegistrationStatus.CANCELLED)
    assert Registration.objects.filter(user=cancelled.user, event=cancelled.event).count() == 3


def test_registration_status_outside_its_values_is_rejected():
    registration = RegistrationFactory()
    assert_rejected(lambda: Registration.objects.filter(pk=registration.pk).update(status="waitlisted"))


# ── SavedEvent ──────────────────────────────────────────────────────────────────────────────────


def test_saved_event_with_both_user_and_token_is_rejected():
    event, user = EventFactory(), UserFactory()
    assert_rejected(lambda: SavedEvent.objects.create(event=event, user=user, visitor_token="tok"))


def test_saved_event_with_neither_user_nor_token_is_rejected():
    event = EventFactory()
    assert_rejected(lambda: SavedEvent.objects.create(event=event, user=None, visitor_token=""))


def test_duplicate_save_by_the_same_user_is_rejected():
    save = SavedEventFactory()
    assert_rejected(lambda: SavedEvent.objects.create(event=save.event, user=save.user))


def test_duplicate_save_by_the_same_visitor_token_is_rejected():
    save = SavedEventFactory(user=None, visitor_token="anon-token")
    assert_rejected(lambda: SavedEvent.objects.create(event=save.event, visitor_token="anon-token"))


def test_different_owners_may_save_the_same_event():
    event = EventFactory()
    SavedEventFactory(event=event)
    SavedEventFactory(event=event)
    SavedEventFactory(event=event, user=None, visitor_token="token-a")
    SavedEventFactory(event=event, user=None, visitor_token="token-b")
    assert SavedEvent.objects.filter(event=event).count() == 4


# ── Activity ────────────────────────────────────────────────────────────────────────────────────


def test_activity_with_an_unknown_mode_is_rejected():
    assert_rejected(lambda: Activity.objects.create(action="search_events", mode="robot", outcome="OK"))


def test_activity_with_a_known_mode_is_accepted():
    Activity.objects.create(action="search_events", mode="agent", outcome="OK")
    assert Activity.objects.filter(mode="agent").count() == 1


@pytest.mark.django_db
def test_an_event_read_without_its_seats_refuses_to_count_them_behind_the_callers_back():
    from events.models import SeatsNotCounted

    event = EventFactory(capacity=3)
    plain = Event.objects.get(pk=event.pk)
    with pytest.raises(SeatsNotCounted):
        _ = plain.is_full
    assert Event.objects.with_seats().get(pk=event.pk).is_full is False
    assert Event.objects.get(pk=EventFactory(capacity=None).pk).is_full is False  # no seats to count
