"""factory-boy factories. Defaults are unsurprising: a published, free, upcoming event in Taipei."""

from datetime import timedelta

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from events.activity import write_rows
from events.choices import EventStatus, Level, Location, Price, RegistrationStatus
from events.models import (
    Activity,
    Event,
    Question,
    QuestionOption,
    Registration,
    SavedEvent,
    TicketType,
    WaitlistEntry,
)
from events.services.ledger import recount_seats


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct-horse-battery")


class EventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Event

    public_id = factory.Sequence(lambda n: f"evt-sample-{n}")
    title = factory.Sequence(lambda n: f"Sample event {n}")
    summary = "A sample event."
    description = "Longer description of the sample event."
    starts_at = factory.LazyFunction(lambda: timezone.now() + timedelta(days=30))
    ends_at = factory.LazyAttribute(lambda e: e.starts_at + timedelta(hours=2))
    location = Location.TAIPEI
    venue = "Sample venue"
    price = Price.FREE
    price_amount = None
    currency = ""
    level = Level.BEGINNER
    capacity = None
    status = EventStatus.PUBLISHED

    class Params:
        paid = factory.Trait(price=Price.PAID, price_amount=500, currency="TWD")
        past = factory.Trait(starts_at=factory.LazyFunction(lambda: timezone.now() - timedelta(days=3)))
        cancelled = factory.Trait(status=EventStatus.CANCELLED)
        draft = factory.Trait(status=EventStatus.DRAFT)


class SeatRowFactory(factory.django.DjangoModelFactory):
    """A registration or waiting-list entry: its event's seat counter is recounted after it, as the
    seat ledger does after every change (a test then starts where the site would be)."""

    class Meta:
        abstract = True

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        row = super()._create(model_class, *args, **kwargs)
        recount_seats(Event.objects.filter(pk=row.event_id))
        return row


class RegistrationFactory(SeatRowFactory):
    class Meta:
        model = Registration

    user = factory.SubFactory(UserFactory)
    event = factory.SubFactory(EventFactory)
    status = RegistrationStatus.CONFIRMED


class SavedEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SavedEvent

    user = factory.SubFactory(UserFactory)
    event = factory.SubFactory(EventFactory)


class ActivityFactory(factory.django.DjangoModelFactory):
    """A row written the site's way (`write_rows`), so the day counts include it."""

    class Meta:
        model = Activity

    action = "search_events"
    mode = "ui"
    outcome = "OK"

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        row = model_class(*args, **kwargs)
        write_rows([row])
        return row


class WaitlistEntryFactory(SeatRowFactory):
    class Meta:
        model = WaitlistEntry

    user = factory.SubFactory(UserFactory)
    event = factory.SubFactory(EventFactory)


class QuestionFactory(factory.django.DjangoModelFactory):
    """A registration question (optional short text unless told); its event's form follows (signals)."""

    class Meta:
        model = Question

    event = factory.SubFactory(EventFactory)
    position = factory.Sequence(lambda n: n)
    identifier = factory.Sequence(lambda n: f"question_{n}")
    label_en = factory.Sequence(lambda n: f"Question {n}")
    label_zh_hant = factory.Sequence(lambda n: f"問題 {n}")
    kind = "text"
    required = False


class QuestionOptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = QuestionOption

    question = factory.SubFactory(QuestionFactory, kind="single_choice")
    position = factory.Sequence(lambda n: n)
    identifier = factory.Sequence(lambda n: f"option_{n}")
    label_en = factory.Sequence(lambda n: f"Option {n}")
    label_zh_hant = factory.Sequence(lambda n: f"選項 {n}")


def choice_question(event, identifier: str, options: list[str], **fields) -> Question:
    """A choice question of `event` with these option identifiers (labels derived from them)."""
    question = QuestionFactory(
        event=event, identifier=identifier, kind=fields.pop("kind", "single_choice"), **fields
    )
    for option in options:
        QuestionOptionFactory(
            question=question, identifier=option, label_en=option.title(), label_zh_hant=option
        )
    return question


class TicketTypeFactory(factory.django.DjangoModelFactory):
    """A ticket type (its event's `ticket_form` follows, as for every change of one: events/signals.py)."""

    class Meta:
        model = TicketType

    event = factory.SubFactory(EventFactory)
    position = factory.Sequence(int)
    identifier = factory.Sequence(lambda n: f"type_{n}")
    name_en = factory.LazyAttribute(lambda t: t.identifier.replace("_", " ").title())
    name_zh_hant = "票種"
    price = 600


def paid_event(*, prices: dict[str, int] | None = None, **fields) -> Event:
    """A published event selling the ticket types `prices` ({identifier: TWD}; one regular type at
    TWD 600 by default), with the event as its readers then see it (its ticket form written)."""
    event = EventFactory(**fields)
    for identifier, price in (prices or {"regular": 600}).items():
        TicketTypeFactory(event=event, identifier=identifier, price=price)
    event.refresh_from_db()
    return event
