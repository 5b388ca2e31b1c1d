"""The organisers' use cases (cancel_event, publish_event, unpublish_event): who may, and what follows."""

from __future__ import annotations

import pytest

from core.errors import PermissionDenied
from core.visitors import Mode, Visitor
from events import actions
from events.choices import EventStatus, RegistrationStatus
from events.errors import EventNotFound
from events.models import Activity, Registration
from events.services import organiser
from tests.factories import EventFactory, RegistrationFactory, UserFactory
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ORGANISER_USE_CASES = [organiser.cancel_event, organiser.publish_event, organiser.unpublish_event]


@pytest.mark.parametrize("use_case", ORGANISER_USE_CASES, ids=lambda f: f.__name__)
def test_a_visitor_who_may_not_change_events_is_refused_and_nothing_changes(use_case):
    event = EventFactory()
    RegistrationFactory(event=event)
    with pytest.raises(PermissionDenied) as refused:
        actions.call(
            use_case.__name__, visitor=Visitor(user=UserFactory()), channel=Mode.API, event_id=event.public_id
        )
    assert refused.value.reason == "NOT_ORGANISER"
    event.refresh_from_db()
    assert event.status == EventStatus.PUBLISHED
    assert Registration.objects.get(event=event).status == RegistrationStatus.CONFIRMED
    assert Activity.objects.get(action=use_case.__name__).outcome == "NOT_ORGANISER"


@pytest.mark.parametrize("use_case", ORGANISER_USE_CASES, ids=lambda f: f.__name__)
def test_an_unknown_event_is_not_found(use_case, organiser):
    with pytest.raises(EventNotFound):
        actions.call(use_case.__name__, visitor=organiser, channel=Mode.ADMIN, event_id="evt-nothing-here")


def test_cancel_event_cancels_confirmed_registrations_and_tells_their_holders(organiser, mailoutbox):
    event = EventFactory(capacity=3)
    confirmed = RegistrationFactory.create_batch(2, event=event)
    RegistrationFactory(event=event, status=RegistrationStatus.CANCELLED)
    other = RegistrationFactory()  # another event's registration is left alone
    result = actions.call("cancel_event", visitor=organiser, channel=Mode.ADMIN, event_id=event.public_id)
    run_tasks()
    assert result.changed and result.cancelled_registrations == 2
    assert sorted(message.to[0] for message in mailoutbox) == sorted(r.user.email for r in confirmed)
    assert not Registration.objects.filter(event=event, status=RegistrationStatus.CONFIRMED).exists()
    other.refresh_from_db()
    assert other.status == RegistrationStatus.CONFIRMED


def test_cancelling_twice_changes_nothing_and_sends_nothing_more(organiser, mailoutbox):
    event = EventFactory()
    RegistrationFactory(event=event)
    actions.call("cancel_event", visitor=organiser, channel=Mode.ADMIN, event_id=event.public_id)
    again = actions.call("cancel_event", visitor=organiser, channel=Mode.ADMIN, event_id=event.public_id)
    run_tasks()
    assert (again.changed, again.cancelled_registrations) == (False, 0)
    assert len(mailoutbox) == 1
    outcomes = list(
        Activity.objects.filter(action="cancel_event").order_by("id").values_list("outcome", flat=True)
    )
    assert outcomes == ["OK", "UNCHANGED"]


def test_a_rollback_sends_no_mail(organiser, mailoutbox):
    """The mail is queued in the change's transaction: if the change is rolled back, nobody is told."""
    from django.db import transaction

    event = EventFactory()
    RegistrationFactory(event=event)
    with pytest.raises(RuntimeError), transaction.atomic():
        actions.call("cancel_event", visitor=organiser, channel=Mode.ADMIN, event_id=event.public_id)
        raise RuntimeError("the surrounding work failed")
    run_tasks()
    assert mailoutbox == []
    assert Registration.objects.get(event=event).status == RegistrationStatus.CONFIRMED
