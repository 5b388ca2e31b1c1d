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


def sign_up(client, username: str, email: str):
    data = {"username": username, "email": email, "password1": "a-long-enough-pass-2027"}
    return client.post("/accounts/signup/", {**data, "password2": data["password1"]})


@pytest.fixture
def _fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize(
    ("username", "email"),
    [("newcomer", "Grace@Example.com"), ("grace", "new@example.com"), ("GRACE", "grace@example.com")],
)
def test_sign_up_never_says_on_the_page_that_an_account_exists(en_client, _fresh_cache, username, email):
    UserFactory(username="grace", email="grace@example.com")
    fresh = sign_up(en_client, "someone-new", "someone-new@example.com")  # the page a new account gets
    assert fresh.status_code == 302
    mail.outbox.clear()
    answer = sign_up(en_client.__class__(headers={"Accept-Language": "en"}), username, email)
    html = answer.content.decode()
    assert answer.status_code == 200 and "Check your e-mail" in html
    said = html.split('id="sign-up-sent"', 1)[1].split("</div>", 1)[0].lower()
    assert not any(word in said for word in ("already", "taken", "exists", "username"))
    assert "errorlist" not in html
    assert get_user_model().objects.filter(email__iexact="grace@example.com").count() == 1
    assert not get_user_model().objects.filter(username=username).exclude(username="grace").exists()
    [told] = mail.outbox
    if email.lower() == "grace@example.com":  # the address's owner is told, with the way back in
        assert told.to == ["grace@example.com"]
        assert "already has one" in told.body and "/accounts/password_reset/" in told.body
    else:  # a new address: its owner is told the username is taken
        assert told.to == [email] and "is taken" in told.body


def test_sign_up_is_limited_per_client_address(client, _fresh_cache, settings):
    settings.SIGN_UPS_PER_HOUR = 3
    answers = [
        sign_up(client.__class__(REMOTE_ADDR="10.5.5.5"), f"user{n}", f"user{n}@example.com").status_code
        for n in range(4)
    ]
    assert answers == [302, 302, 302, 429]
    assert get_user_model().objects.count() == 3
    assert sign_up(client.__class__(REMOTE_ADDR="10.6.6.6"), "other", "other@example.com").status_code == 302


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
