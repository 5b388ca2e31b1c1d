"""The list page's drawn cards (events/templatetags/cards.py) change nothing a person or an agent gets:
the page's HTML is the same with the cache and without it, for an anonymous visitor and a signed-in
one, after every kind of change a card shows (an event edited, seats taken and freed, a save, an event
cancelled, the language). Each step draws the page with the cache warm from the step before, then
without the cache, and compares: a key that left out something a card shows would serve the old card
here. Runs on the suite's database (SQLite, or PostgreSQL with DATABASE_URL)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import time_machine
from django.core.cache import caches
from django.db import connection
from django.template import engines
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from events.choices import RegistrationStatus
from events.models import Registration
from events.templatetags.cards import CARD_TEMPLATE
from tests.factories import EventFactory, QuestionFactory, RegistrationFactory, UserFactory, choice_question

from .conftest import EN, HTMX, manifest_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/events/"
#: A search whose page shows every event below, the list's query carried in each card's link.
SEARCH = "/events/?location=taipei"
TOKENS = re.compile(r'(name="csrfmiddlewaretoken" value="|name="csrf-token" content=")[^"]+"')


@pytest.fixture
def catalogue(db):
    return [
        EventFactory(public_id="evt-cache-full", title="Almost full", capacity=2),
        EventFactory(public_id="evt-cache-open", title="Plenty of room", capacity=40, paid=True),
        EventFactory(public_id="evt-cache-free", title="No seat limit"),
    ]


@pytest.fixture
def without_cache(settings):
    """Switches the pages cache off (a cache that keeps nothing) for the `drawn` below."""
    kept = settings.CACHES["pages"]

    def switch(off: bool) -> None:
        off_cache = {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
        settings.CACHES = {**settings.CACHES, "pages": off_cache if off else kept}

    return switch


def drawn(client: Client, path: str, **headers: str) -> tuple[str, list[str]]:
    """The page's HTML with its CSRF tokens blanked (each drawing masks the secret anew), and the
    templates drawn for it."""
    response = client.get(path, headers=headers)
    assert response.status_code == 200
    html = TOKENS.sub(r'\1"', response.content.decode())
    return html, [template.name for template in response.templates]


def same_with_and_without_cache(client: Client, without_cache, path: str = SEARCH, **headers: str) -> str:
    """Draw `path` with the cache (warm), then without it: the same HTML. The cached one is returned."""
    without_cache(False)
    cached, _ = drawn(client, path, **headers)
    without_cache(True)
    fresh, templates = drawn(client, path, **headers)
    without_cache(False)
    assert CARD_TEMPLATE in templates  # without the cache, every card was drawn
    assert cached == fresh
    return cached


def visitors(user) -> dict[str, Client]:
    signed_in = Client(headers=EN)
    signed_in.force_login(user)
    return {"anonymous": Client(headers=EN), "signed in": signed_in}


def test_a_card_drawn_once_is_served_from_the_cache(catalogue, without_cache):
    caches["pages"].clear()
    client = Client(headers=EN)
    without_cache(False)
    _, first = drawn(client, SEARCH)
    _, second = drawn(client, SEARCH)
    assert first.count(CARD_TEMPLATE) == 3
    assert CARD_TEMPLATE not in second  # no card drawn again: the page is the same (below)


def test_the_page_is_the_same_with_and_without_the_cache_across_changes(catalogue, user, without_cache):
    full, open_, free = catalogue
    for name, client in visitors(user).items():
        caches["pages"].clear()
        html = same_with_and_without_cache(client, without_cache)
        assert "2 seats left" in html and "Almost full" in html, name

        full.title = f"Almost full, renamed for the {name} visitor"
        full.save()
        html = same_with_and_without_cache(client, without_cache)
        assert full.title in html, name

        taken = [RegistrationFactory(event=full, user=UserFactory()) for _ in range(2)]
        html = same_with_and_without_cache(client, without_cache)
        card = html.split('id="event-evt-cache-full"')[1].split("</article>")[0]
        assert "badge-full" in card and "Full" in card, name

        Registration.objects.filter(pk=taken[0].pk).update(status=RegistrationStatus.CANCELLED)
        html = same_with_and_without_cache(client, without_cache)
        card = html.split('id="event-evt-cache-full"')[1].split("</article>")[0]
        assert "1 seat left" in card, name
        Registration.objects.filter(event=full).delete()

        assert client.post(f"/events/{open_.public_id}/save/").status_code == 302
        assert "Saved. You can find it" in client.get(URL).content.decode()  # its message, shown once
        html = same_with_and_without_cache(client, without_cache)
        card = html.split('id="event-evt-cache-open"')[1].split("</article>")[0]
        assert "badge-saved" in card, name

        same_with_and_without_cache(client, without_cache, SEARCH, **{"Accept-Language": "zh-hant"})
        same_with_and_without_cache(client, without_cache, SEARCH, **HTMX, **{"HX-Target": "results"})
        same_with_and_without_cache(client, without_cache, URL)

        free.status = "cancelled"
        free.save()
        html = same_with_and_without_cache(client, without_cache)
        assert 'id="event-evt-cache-free"' not in html, name
        free.status = "published"
        free.save()
        full.title = "Almost full"
        full.save()


def test_the_tools_and_forms_of_the_page_are_the_same_with_and_without_the_cache(
    catalogue, user, without_cache
):
    """What an agent is offered (the manifest) and what a person submits (the forms, with a CSRF token
    that is accepted) do not depend on the cache."""
    client = Client(headers=EN, enforce_csrf_checks=True)
    client.force_login(user)
    without_cache(False)
    drawn(client, SEARCH)  # warm
    cached = client.get(SEARCH).content.decode()
    without_cache(True)
    fresh = client.get(SEARCH).content.decode()
    without_cache(False)
    assert manifest_in(cached) == manifest_in(fresh)
    forms = re.compile(r"<form[^>]*>")
    assert forms.findall(cached) == forms.findall(fresh)
    [token] = re.findall(r'name="csrf-token" content="([^"]+)"', cached)
    saved = client.post(f"/events/{catalogue[1].public_id}/save/", headers={"X-CSRFToken": token})
    assert saved.status_code == 302  # the cached page's token is the session's


def test_a_tool_call_answers_the_same_card_with_and_without_the_cache(catalogue, user, without_cache):
    """`save_event` from the list answers with the saved event's card: the cached card is the same."""
    answers = []
    for off in (False, True):
        client = Client(headers=EN)
        client.force_login(UserFactory(username=f"card-{off}"))
        without_cache(off)
        response = client.post(
            f"/events/{catalogue[0].public_id}/save/",
            headers={"X-WebMCP-Tool": "save_event", "X-WebMCP-Page": f"http://testserver{SEARCH}"},
            content_type="application/json",
        )
        assert response.status_code == 200
        html = response.content.decode()
        answers.append(html.split('<article class="event-card')[1].split("</article>")[0])
    without_cache(False)
    assert answers[0] == answers[1]
    assert "badge-saved" in answers[0]


def test_production_uses_the_cached_template_loader(settings):
    """Templates are parsed once per process: Django's cached loader, which it wraps around the
    loaders when TEMPLATES names none (config/settings.py names none)."""
    settings.DEBUG = False
    assert "loaders" not in settings.TEMPLATES[0]["OPTIONS"]
    engine = engines["django"].engine
    [(loader, _inner)] = engine.loaders
    assert loader == "django.template.loaders.cached.Loader"


def test_two_people_in_the_same_state_never_share_a_drawn_page(catalogue, without_cache):
    """Each saved one event (both at stateVersion 1): each page shows that person's own save."""
    without_cache(False)
    pages = {}
    for username, event in (("first-saver", catalogue[0]), ("second-saver", catalogue[1])):
        client = Client(headers=EN)
        client.force_login(UserFactory(username=username))
        assert client.post(f"/events/{event.public_id}/save/").status_code == 302
        client.get(URL)  # the save's message, shown once
        pages[event.public_id] = drawn(client, SEARCH)[0]
    for public_id, html in pages.items():
        saved = re.findall(r'id="event-(evt-cache-[a-z]+)".*?</article>', html, re.S)
        badges = {
            event_id
            for event_id in saved
            if "badge-saved" in html.split(f'id="event-{event_id}"')[1].split("</article>")[0]
        }
        assert badges == {public_id}


def test_an_event_that_starts_leaves_the_drawn_list(catalogue, without_cache):
    soon = EventFactory(public_id="evt-cache-soon", starts_at=timezone.now() + timedelta(hours=1))
    client = Client(headers=EN)
    html = same_with_and_without_cache(client, without_cache)
    assert 'id="event-evt-cache-soon"' in html
    with time_machine.travel(soon.starts_at + timedelta(minutes=1)):
        html = same_with_and_without_cache(client, without_cache)
    assert 'id="event-evt-cache-soon"' not in html and 'id="event-evt-cache-full"' in html


def test_the_view_finds_the_region_under_the_key_the_cache_tag_keeps_it_by(catalogue, without_cache):
    """The list view reads the drawn region before searching (events/web/views.py): its key
    (`region_key`) is the one Django's `{% cache %}` tag in the template keeps the region under."""
    without_cache(False)
    caches["pages"].clear()
    client = Client(headers=EN)
    drawn(client, SEARCH)
    with CaptureQueriesContext(connection) as queries:
        _, templates = drawn(client, SEARCH)
    assert CARD_TEMPLATE not in templates
    assert not any('"events_event"."capacity"' in query["sql"] for query in queries.captured_queries)


def test_the_event_pages_blank_questions_are_kept_and_the_same_as_drawn_across_changes(user, without_cache):
    """The registration form's questions, drawn blank, are kept by the event's questions, the language
    and the URL (templates/events/includes/register_questions.html): the page is the same with the
    cache and without it after a question is added and in either language, and the second drawing
    does not draw the questions again."""
    event = EventFactory(public_id="evt-cache-questions")
    choice_question(event, "diet", ["none", "other"], required=True, label_en="Diet")
    client = Client()
    client.force_login(user)
    path = f"/events/{event.public_id}/"

    def same(language: str) -> str:
        without_cache(False)
        cached, _ = drawn(client, path, **{"Accept-Language": language})
        without_cache(True)
        fresh, _ = drawn(client, path, **{"Accept-Language": language})
        without_cache(False)
        assert cached == fresh
        return cached

    caches["pages"].clear()
    assert 'name="answers-diet"' in same("en") and "Diet" in same("en")
    _, templates = drawn(client, path, **EN)
    assert "events/includes/questions.html" not in templates  # kept: not drawn again
    QuestionFactory(event=event, identifier="table_size", label_en="Table size", label_zh_hant="桌子大小")
    assert 'name="answers-table_size"' in same("en")  # a new question: a new key, never the old part
    assert "桌子大小" in same("zh-hant") and "Table size" not in same("zh-hant")
