"""The REST API of registration questions: a registration's body takes `answers`, the refusal names
each one, `/api/me/registrations` shows them, the person changes them, managers approve and decline;
and a registration with answers stays within the write budget whatever the number of questions."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from events.choices import RegistrationStatus, StaffRole
from events.models import EventStaff, Registration
from tests.factories import EventFactory, QuestionFactory, UserFactory, choice_question

from .conftest import ApiClient, assert_envelope
from .test_write_statements import LIMIT, TRANSACTION_CONTROL, batched_activity  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def workshop():
    event = EventFactory(public_id="evt-api-questions")
    choice_question(event, "size", ["s", "m", "l"], required=True)
    QuestionFactory(event=event, identifier="company")
    return event


def registration_url(event) -> str:
    return f"/api/events/{event.public_id}/registration"


def test_register_with_answers_and_read_them_back(signed_in_api, workshop):
    body = {"answers": {"size": "m", "company": "ACME"}}
    response = signed_in_api.write("post", registration_url(workshop), json.dumps(body))
    assert response.status_code == 201, response.content
    assert response.json()["registration"]["answers"]["size"]["value"] == "m"
    listed = signed_in_api.get("/api/me/registrations").json()["registrations"][0]
    assert listed["answers"]["company"]["value"] == "ACME"


def test_a_refused_answer_is_the_envelope_with_each_field(signed_in_api, workshop):
    body = {"answers": {"size": "xl", "shoe": "42"}}
    response = signed_in_api.write("post", registration_url(workshop), json.dumps(body))
    envelope = assert_envelope(response, 400, "INVALID_INPUT", "ANSWERS_INVALID")
    assert envelope["fields"]["answers.size"][0]["code"] == "not_an_option"
    assert envelope["fields"]["answers.shoe"][0]["code"] == "unknown"
    assert envelope["validIdentifiers"] == ["company", "size"]
    assert not Registration.objects.exists()


def test_answers_that_are_not_an_object_are_a_validation_error(signed_in_api, workshop):
    response = signed_in_api.write("post", registration_url(workshop), json.dumps({"answers": ["m"]}))
    assert_envelope(response, 400, "INVALID_INPUT", "VALIDATION_ERROR")


def test_the_person_changes_their_answers(signed_in_api, workshop):
    signed_in_api.write("post", registration_url(workshop), json.dumps({"answers": {"size": "m"}}))
    url = f"/api/events/{workshop.public_id}/registration/answers"
    response = signed_in_api.write("put", url, json.dumps({"answers": {"size": "l"}}))
    assert response.status_code == 200, response.content
    assert (response.json()["changed"], Registration.objects.get().answers["size"]["value"]) == (True, "l")


def test_managers_approve_over_the_api_and_others_are_refused(signed_in_api, user):
    event = EventFactory(requires_approval=True)
    signed_in_api.write("post", registration_url(event), "")
    registration = Registration.objects.get()
    assert registration.status == RegistrationStatus.PENDING_APPROVAL
    manager = UserFactory()
    EventStaff.objects.create(event=event, user=manager, role=StaffRole.MANAGER)
    refused = signed_in_api.write("post", f"/api/registrations/{registration.pk}/approve")
    assert_envelope(refused, 403, "PERMISSION_DENIED")
    client = ApiClient()
    client.force_login(manager)
    approved = client.write("post", f"/api/registrations/{registration.pk}/approve")
    assert approved.status_code == 200, approved.content
    assert approved.json()["registration"]["status"] == "confirmed"


def _register_statements(n_questions: int) -> int:
    event = EventFactory(capacity=100)
    answers = {}
    for n in range(n_questions):
        QuestionFactory(event=event, identifier=f"q{n}", required=True)
        answers[f"q{n}"] = f"answer {n}"
    client = ApiClient()
    client.force_login(UserFactory())
    with CaptureQueriesContext(connection) as captured:
        response = client.write("post", registration_url(event), json.dumps({"answers": answers}))
    assert response.status_code == 201, response.content
    return len([q for q in captured.captured_queries if not q["sql"].startswith(TRANSACTION_CONTROL)])


def test_a_registration_with_answers_is_seven_statements_for_1_and_20_questions():
    assert _register_statements(1) == _register_statements(20) == LIMIT
