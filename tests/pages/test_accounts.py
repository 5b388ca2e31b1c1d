"""Sign up, sign in (with the merge of session saves), sign out and password reset pages."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from core.visitors import SESSION_TOKEN_KEY
from events.models import SavedEvent
from tests.factories import EventFactory, SavedEventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PASSWORD = "correct-horse-battery"


def test_session_saves_merge_into_the_account_at_sign_in_without_duplicates(en_client):
    user = UserFactory(username="carol")
    both, only_session = EventFactory(), EventFactory()
    SavedEventFactory(user=user, event=both)
    en_client.post(f"/events/{both.public_id}/save/")
    en_client.post(f"/events/{only_session.public_id}/save/")
    token = en_client.session[SESSION_TOKEN_KEY]
    assert SavedEvent.objects.filter(visitor_token=token).count() == 2

    response = en_client.post("/accounts/login/", {"username": "carol", "password": PASSWORD, "next": "/me/"})

    assert response.status_code == 302 and response["Location"] == "/me/"
    assert SavedEvent.objects.filter(user=user, event=both).count() == 1
    assert SavedEvent.objects.filter(user=user, event=only_session).count() == 1
    assert not SavedEvent.objects.filter(visitor_token=token).exists()
    assert SavedEvent.objects.count() == 2
    html = en_client.get("/me/").content.decode()
    assert both.title in html and only_session.title in html


def test_sign_up_creates_the_account_signs_in_and_merges_saves(en_client):
    event = EventFactory()
    en_client.post(f"/events/{event.public_id}/save/")
    response = en_client.post(
        "/accounts/signup/",
        {
            "username": "dave",
            "email": "dave@example.com",
            "password1": "a-long-enough-pass-2027",
            "password2": "a-long-enough-pass-2027",
            "next": f"/events/{event.public_id}/",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == f"/events/{event.public_id}/"
    user = get_user_model().objects.get(username="dave")
    assert user.email == "dave@example.com"
    assert SavedEvent.objects.filter(user=user, event=event).exists()
    assert 'id="register-form"' in en_client.get(response["Location"]).content.decode()


def test_sign_up_requires_an_email(en_client):
    response = en_client.post(
        "/accounts/signup/",
        {"username": "erin", "password1": "a-long-pass-2027", "password2": "a-long-pass-2027"},
    )
    assert response.status_code == 200
    assert not get_user_model().objects.filter(username="erin").exists()


def test_sign_up_ignores_a_foreign_next(en_client):
    response = en_client.post(
        "/accounts/signup/",
        {
            "username": "frank",
            "email": "frank@example.com",
            "password1": "a-long-enough-pass-2027",
            "password2": "a-long-enough-pass-2027",
            "next": "https://evil.example/",
        },
    )
    assert response["Location"] == "/me/"


def test_sign_in_page_links_to_sign_up_keeping_next(en_client):
    html = en_client.get("/accounts/login/", {"next": "/events/evt-x/"}).content.decode()
    assert 'name="next" value="/events/evt-x/"' in html
    assert "/accounts/signup/?next=/events/evt-x/" in html
    assert "/accounts/password_reset/" in html


def test_sign_out_is_a_post_form(signed_in_en_client):
    html = signed_in_en_client.get("/events/").content.decode()
    assert re.search(r'<form class="inline-form" method="post" action="/accounts/logout/">', html)
    response = signed_in_en_client.post("/accounts/logout/")
    assert response.status_code == 302
    assert "Sign out" not in signed_in_en_client.get("/events/").content.decode()


def test_password_reset_sends_a_link(en_client, user):
    response = en_client.post("/accounts/password_reset/", {"email": user.email})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    assert "/accounts/reset/" in mail.outbox[0].body
    assert "Check your e-mail" in en_client.get(response["Location"]).content.decode()


@pytest.mark.parametrize(
    "url",
    ["/accounts/login/", "/accounts/signup/", "/accounts/password_reset/", "/accounts/password_reset/done/"],
)
def test_account_pages_render_in_the_site_layout_and_expose_no_tools(en_client, url):
    html = en_client.get(url).content.decode()
    assert 'class="site-header"' in html
    assert "toolname=" not in html
    assert "data-webmcp-confirm" not in html
    manifest = re.search(r'<script id="webmcp-manifest" type="application/json">(.*?)</script>', html, re.S)
    assert manifest is not None
    assert '"tools": []' in manifest.group(1)
