"""zh-Hant by default, English on request (Accept-Language or the language cookie), and a switcher."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_default_language_is_traditional_chinese(client, event):
    html = client.get("/events/").content.decode()
    assert '<html lang="zh-Hant">' in html
    assert "尋找活動" in html
    assert "台北" in html  # choice labels are translated too
    assert "Find an event" not in html


def test_accept_language_en_gives_english(event):
    html = Client(headers={"Accept-Language": "en"}).get("/events/").content.decode()
    assert '<html lang="en">' in html
    assert "Find an event" in html
    assert "Taipei" in html


def test_language_cookie_gives_english(client, event):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert "Find an event" in client.get("/events/").content.decode()


def test_language_switcher_posts_to_set_language(client, event):
    html = client.get("/events/?location=taipei").content.decode()
    assert 'action="/i18n/setlang/"' in html
    assert 'name="next" value="/events/?location=taipei"' in html
    response = client.post("/i18n/setlang/", {"language": "en", "next": "/events/?location=taipei"})
    assert response.status_code == 302
    assert "Find an event" in client.get(response["Location"]).content.decode()
