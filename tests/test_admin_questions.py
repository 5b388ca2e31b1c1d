"""The admin's registration questions: the ordered inline on the event, what an answer locks (and the
organiser told why), approval decisions, the attendee list's answers and the formula-safe CSV export."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from core.csvsafe import safe_cell
from core.visitors import Visitor
from events import actions
from events.choices import RegistrationStatus
from events.models import Activity, Event, QuestionOption, Registration
from tests.factories import EventFactory, QuestionFactory, UserFactory, choice_question
from tests.test_admin import EVENT_CHANGELIST, change_form, run_action

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

REGISTRATION_CHANGELIST = reverse("admin:events_registration_changelist")


@pytest.fixture
def admin_client() -> Client:
    client = Client(headers={"accept-language": "en"})
    client.force_login(UserFactory(username="organiser", is_staff=True, is_superuser=True))
    return client


def question_rows(prefix: str, rows: list[dict]) -> dict:
    data = {f"{prefix}-TOTAL_FORMS": str(len(rows)), f"{prefix}-INITIAL_FORMS": "0"}
    for index, row in enumerate(rows):
        data.update({f"{prefix}-{index}-{key}": value for key, value in row.items()})
    return data


def test_questions_are_added_in_order_on_the_events_page_and_published_in_its_form(admin_client):
    event = EventFactory()
    rows = [
        {
            "position": "2",
            "identifier": "company",
            "label_en": "Company",
            "label_zh_hant": "公司",
            "kind": "text",
        },
        {
            "position": "1",
            "identifier": "size",
            "label_en": "Size",
            "label_zh_hant": "尺寸",
            "kind": "single_choice",
        },
    ]
    url, data = change_form(admin_client, event, **question_rows("questions", rows))
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context and response.context["errors"]
    form = Event.objects.get(pk=event.pk).question_form
    assert [question["identifier"] for question in form] == ["size", "company"]
    assert form[1]["label"] == {"en": "Company", "zh-hant": "公司"}


def test_a_bad_identifier_and_more_than_twenty_questions_are_refused(admin_client):
    event = EventFactory()
    bad = [
        {"identifier": "Not A Slug", "label_en": "x", "label_zh_hant": "x", "kind": "text", "position": "0"}
    ]
    url, data = change_form(admin_client, event, **question_rows("questions", bad))
    assert "identifier is a lowercase letter" in admin_client.post(url, data).content.decode()
    many = [
        {"identifier": f"q{n}", "label_en": "x", "label_zh_hant": "x", "kind": "text", "position": str(n)}
        for n in range(21)
    ]
    url, data = change_form(admin_client, event, **question_rows("questions", many))
    admin_client.post(url, data)
    assert Event.objects.get(pk=event.pk).question_form == []


def test_an_answered_questions_kind_cannot_change_and_the_admin_says_why(admin_client):
    event = EventFactory()
    question = QuestionFactory(event=event, identifier="company")
    person = Visitor(user=UserFactory())
    actions.call(
        "register_event", visitor=person, channel="ui", event_id=event.public_id, answers={"company": "ACME"}
    )
    url = reverse("admin:events_question_change", args=[question.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None and name != "event"}
    data.update({"kind": "long_text", "options-TOTAL_FORMS": "0", "options-INITIAL_FORMS": "0"})
    response = admin_client.post(url, data)
    assert "People have answered this question, so its kind cannot change" in response.content.decode()
    question.refresh_from_db()
    assert question.kind == "text"


def test_a_chosen_option_cannot_be_deleted_only_hidden(admin_client):
    event = EventFactory()
    question = choice_question(event, "size", ["s", "m"])
    person = Visitor(user=UserFactory())
    actions.call(
        "register_event", visitor=person, channel="ui", event_id=event.public_id, answers={"size": "m"}
    )
    url = reverse("admin:events_question_change", args=[question.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None and name != "event"}
    options = list(QuestionOption.objects.filter(question=question).order_by("position"))
    data.update({"options-TOTAL_FORMS": "2", "options-INITIAL_FORMS": "2"})
    for index, option in enumerate(options):
        data.update(
            {
                f"options-{index}-id": str(option.pk),
                f"options-{index}-question": str(question.pk),
                f"options-{index}-position": str(option.position),
                f"options-{index}-identifier": option.identifier,
                f"options-{index}-label_en": option.label_en,
                f"options-{index}-label_zh_hant": option.label_zh_hant,
            }
        )
    data["options-1-DELETE"] = "on"
    response = admin_client.post(url, data)
    assert "it cannot be deleted, only hidden" in response.content.decode()
    assert QuestionOption.objects.filter(question=question).count() == 2


def test_managers_approve_and_decline_from_the_registrations_list(admin_client):
    event = EventFactory(requires_approval=True)
    people = [Visitor(user=UserFactory()) for _ in range(2)]
    for person in people:
        actions.call("register_event", visitor=person, channel="ui", event_id=event.public_id)
    first, second = Registration.objects.order_by("pk")
    admin_client.post(
        REGISTRATION_CHANGELIST, {"action": "approve_registrations", "_selected_action": [first.pk]}
    )
    admin_client.post(
        REGISTRATION_CHANGELIST, {"action": "decline_registrations", "_selected_action": [second.pk]}
    )
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == (RegistrationStatus.CONFIRMED, RegistrationStatus.DECLINED)


def test_the_csv_export_has_a_column_per_question_and_no_cell_runs_as_a_formula(admin_client):
    event = EventFactory(title='=HYPERLINK("http://evil")')
    QuestionFactory(event=event, identifier="company")
    choice_question(event, "topics", ["ai", "web"], kind="multi_choice")
    person = Visitor(user=UserFactory(username="amy"))
    answers = {"company": "@SUM(A1:A2)", "topics": ["web", "ai"]}
    actions.call("register_event", visitor=person, channel="ui", event_id=event.public_id, answers=answers)
    response = run_action(admin_client, "export_registrations_csv", [event], url=EVENT_CHANGELIST)
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0][-2:] == ["company", "topics"]
    assert rows[1][-2:] == ["'@SUM(A1:A2)", "Ai, Web"]
    assert rows[1][1] == '\'=HYPERLINK("http://evil")'
    for row in rows:
        assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row)


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@a", "'@a"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=b", "a=b"),
        (None, ""),
        (3, "3"),
    ],
)
def test_safe_cell_neutralises_what_a_spreadsheet_would_run(value, cell):
    assert safe_cell(value) == cell


def test_the_attendee_list_shows_each_registrations_answers(admin_client):
    event = EventFactory()
    QuestionFactory(event=event, identifier="company", label_en="Company")
    person = Visitor(user=UserFactory())
    actions.call(
        "register_event", visitor=person, channel="ui", event_id=event.public_id, answers={"company": "ACME"}
    )
    page = admin_client.get(reverse("admin:events_event_change", args=[event.pk])).content.decode()
    assert "Company: ACME" in page


def test_managers_fill_in_the_organisers_questions_and_the_person_never_sees_them(admin_client):
    """The registration's page links the organisers-only questions; their form performs
    `update_staff_answers` (channel admin) and shows a refusal beside its question."""
    event = EventFactory()
    QuestionFactory(event=event, identifier="company")
    choice_question(event, "seat_row", ["front", "back"], staff_only=True)
    person = Visitor(user=UserFactory())
    actions.call(
        "register_event", visitor=person, channel="ui", event_id=event.public_id, answers={"company": "ACME"}
    )
    registration = Registration.objects.get()
    change = reverse("admin:events_registration_change", args=[registration.pk])
    url = reverse("admin:events_registration_staff_answers", args=[registration.pk])
    assert url in admin_client.get(change).content.decode()
    page = admin_client.get(url).content.decode()
    assert 'name="answers-seat_row"' in page and 'name="answers-company"' not in page

    refused = admin_client.post(url, {"answers-seat_row": "middle"})
    assert refused.status_code == 200 and "field-error" in refused.content.decode()
    saved = admin_client.post(url, {"answers-seat_row": "back"})
    assert saved.status_code == 302 and saved["Location"] == change

    registration.refresh_from_db()
    assert registration.answers["seat_row"]["value"] == "back"
    assert registration.answers["company"]["value"] == "ACME"
    [row] = Activity.objects.filter(action="update_staff_answers", outcome="OK")
    assert row.mode == "admin"
    listed = Client()
    listed.force_login(person.user)
    assert "back" not in listed.get("/api/me/registrations").content.decode()


def test_the_question_rules_are_one_policy():
    """Once answered: a question's kind stays and it stays; a chosen option is only hidden."""
    from django.utils import translation

    from events.policies import option_deletion_refusal, question_change_refusal

    with translation.override("en"):
        kind = str(question_change_refusal(answered=True, kind_changed=True, deleted=False))
        deleted = str(question_change_refusal(answered=True, kind_changed=False, deleted=True))
        option = str(option_deletion_refusal(chosen=True))
    assert "kind cannot change" in kind and "cannot be deleted" in deleted and "only hidden" in option
    assert question_change_refusal(answered=False, kind_changed=True, deleted=True) is None
    assert question_change_refusal(answered=True, kind_changed=False, deleted=False) is None
    assert option_deletion_refusal(chosen=False) is None


def test_the_admins_question_edits_leave_their_activity_row_and_an_answered_question_stays(admin_client):
    event = EventFactory()
    rows = [
        {
            "position": "1",
            "identifier": "company",
            "label_en": "Company",
            "label_zh_hant": "公司",
            "kind": "text",
        }
    ]
    url, data = change_form(admin_client, event, **question_rows("questions", rows))
    assert admin_client.post(url, data).status_code == 302
    [row] = Activity.objects.filter(action="edit_questions")
    assert (row.mode, row.outcome, row.event_id) == ("admin", "OK", event.pk)
    question = event.questions.get()
    person = Visitor(user=UserFactory())
    actions.call(
        "register_event", visitor=person, channel="ui", event_id=event.public_id, answers={"company": "ACME"}
    )
    delete = reverse("admin:events_question_delete", args=[question.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    assert event.questions.count() == 1


def test_the_admins_ticket_type_edits_leave_their_own_activity_row(admin_client):
    event = EventFactory()
    rows = [
        {
            "position": "1",
            "identifier": "early_bird",
            "name_en": "Early bird",
            "name_zh_hant": "早鳥票",
            "price": "600",
        },
        {
            "position": "2",
            "identifier": "regular",
            "name_en": "Regular",
            "name_zh_hant": "一般票",
            "price": "900",
        },
    ]
    url, data = change_form(admin_client, event, **question_rows("ticket_types", rows))
    assert admin_client.post(url, data).status_code == 302
    assert sorted(event.ticket_types.values_list("identifier", "price")) == [
        ("early_bird", 600),
        ("regular", 900),
    ]
    [row] = Activity.objects.filter(action="edit_ticket_types")
    assert (row.mode, row.outcome, row.event_id) == ("admin", "OK", event.pk)
    assert not Activity.objects.filter(action="edit_questions").exists()  # the questions did not change
