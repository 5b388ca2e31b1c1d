"""The registration form of an event page with questions, for people: it shows the questions (each
conditional one saying when it is asked; htmx redraws them for the answers so far), registers with what
was typed, draws refused answers back beside their questions in the person's language, and My events
shows the answers and changes them. Without JavaScript it all works by plain posts."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from events.choices import RegistrationStatus
from events.models import Registration
from tests.factories import EventFactory, QuestionFactory, choice_question

from .conftest import HTMX

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def workshop():
    event = EventFactory(public_id="evt-form-questions")
    diet = choice_question(
        event, "diet", ["none", "other"], required=True, label_en="Diet", label_zh_hant="飲食"
    )
    other = QuestionFactory(event=event, identifier="diet_other", required=True, label_en="Which diet?")
    other.show_if, other.show_if_values = diet, ["other"]
    other.save()
    QuestionFactory(event=event, identifier="photos", kind="consent", label_en="Photos are fine")
    choice_question(event, "topics", ["ai", "web"], kind="multi_choice", label_en="Topics")
    QuestionFactory(event=event, identifier="seat", staff_only=True, label_en="Seat (organisers)")
    return event


def page(client, event) -> str:
    return client.get(f"/events/{event.public_id}/").content.decode()


def test_the_form_shows_the_questions_and_says_when_a_conditional_one_is_asked(signed_in_en_client, workshop):
    html = page(signed_in_en_client, workshop)
    assert (
        'name="answers-diet"' in html and 'name="answers-photos"' in html and 'name="answers-topics"' in html
    )
    assert "Only if your answer to “Diet” is: Other" in html
    assert 'name="answers-diet_other"' in html  # drawn for a person without JavaScript
    assert "Seat (organisers)" not in html


def test_htmx_redraws_the_questions_for_the_answers_so_far(signed_in_en_client, workshop):
    url = f"/events/{workshop.public_id}/register/questions/"
    hidden = signed_in_en_client.post(url, {"answers-diet": "none"}, headers=HTMX).content.decode()
    shown = signed_in_en_client.post(url, {"answers-diet": "other"}, headers=HTMX).content.decode()
    assert 'id="question-register-diet_other" hidden' in hidden
    assert 'id="question-register-diet_other">' in shown
    assert Registration.objects.count() == 0


def test_a_plain_post_registers_with_the_answers(signed_in_en_client, workshop):
    data = {"answers-diet": "other", "answers-diet_other": "no nuts", "answers-photos": "yes"}
    data["answers-topics"] = ["ai", "web"]
    response = signed_in_en_client.post(f"/events/{workshop.public_id}/register/", data)
    assert response.status_code == 302
    answers = {key: entry["value"] for key, entry in Registration.objects.get().answers.items()}
    assert answers == {"diet": "other", "diet_other": "no nuts", "photos": True, "topics": ["ai", "web"]}
    html = page(signed_in_en_client, workshop)
    assert "Your answers" in html and "no nuts" in html and "Ai, Web" in html


@pytest.mark.parametrize(
    ("language", "said"), [("en", "Please answer this question."), ("zh-hant", "請回答這個問題。")]
)
def test_refused_answers_come_back_beside_their_questions_in_the_persons_language(
    client, user, workshop, language, said
):
    client.force_login(user)
    data = {"answers-diet": "other", "answers-photos": "yes"}
    response = client.post(
        f"/events/{workshop.public_id}/register/", data, headers={"Accept-Language": language}
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="answers-diet_other-error"' in html and said in html
    assert 'value="other" checked' in html  # what was typed stays
    assert not Registration.objects.exists()


def test_an_event_without_questions_registers_as_before(signed_in_en_client):
    event = EventFactory()
    assert "answers-" not in page(signed_in_en_client, event)
    signed_in_en_client.post(f"/events/{event.public_id}/register/")
    assert Registration.objects.get().answers == {}


def test_my_events_shows_and_changes_the_answers(signed_in_en_client, workshop):
    signed_in_en_client.post(
        f"/events/{workshop.public_id}/register/", {"answers-diet": "none", "answers-photos": "yes"}
    )
    me = signed_in_en_client.get("/me/").content.decode()
    assert "Change my answers" in me and "None" in me
    changed = signed_in_en_client.post(
        f"/events/{workshop.public_id}/answers/",
        {"answers-diet": "other", "answers-diet_other": "fish", "answers-photos": "yes", "next": "/me/"},
    )
    assert changed.status_code == 302
    assert Registration.objects.get().answers["diet_other"]["value"] == "fish"
    refused = signed_in_en_client.post(
        f"/events/{workshop.public_id}/answers/",
        {"answers-diet": "other", "answers-photos": "yes", "next": "/me/"},
    )
    assert "Please answer this question." in refused.content.decode()
    assert Registration.objects.get().answers["diet_other"]["value"] == "fish"


def test_a_registration_waiting_for_approval_says_so(signed_in_en_client):
    event = EventFactory(requires_approval=True)
    assert "The organisers approve each registration" in page(signed_in_en_client, event)
    signed_in_en_client.post(f"/events/{event.public_id}/register/")
    assert Registration.objects.get().status == RegistrationStatus.PENDING_APPROVAL
    assert "Your seat is held while they decide" in page(signed_in_en_client, event)
    assert "Waiting for the organisers' approval" in signed_in_en_client.get("/me/").content.decode()
