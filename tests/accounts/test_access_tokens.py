"""Personal access tokens: made, shown once, stored hashed, scoped, expiring, revocable; on the API,
the page, the admin and the command line."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from accounts import tokens
from accounts.models import AccessToken
from events.models import Registration, SavedEvent
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EN = {"Accept-Language": "en"}


def make(user, scopes=("events:read",), days=30):
    return tokens.create_access_token(user=user, name="script", scopes=list(scopes), days=days)


def bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}


# ── the token itself ──────────────────────────────────────────────────────────────────────────


def test_a_token_is_recognisable_checksummed_and_stored_only_as_a_hash(user):
    token, raw = make(user)
    assert raw.startswith("are_") and len(raw) == 40 and tokens.well_formed(raw)
    assert token.prefix == raw[:12] and raw not in (token.digest, token.prefix)
    assert AccessToken.objects.get().digest == tokens.digest(raw)
    typo = raw[:-1] + ("A" if raw[-1] != "A" else "B")
    assert not tokens.well_formed(typo)  # refused by the checksum, before any lookup
    assert tokens.authenticate_token(typo) is None


def test_authenticate_notes_the_last_use(user):
    token, raw = make(user)
    assert token.last_used_at is None
    found = tokens.authenticate_token(raw)
    assert found.pk == token.pk and found.user == user
    assert AccessToken.objects.get().last_used_at is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": " ", "scopes": ["events:read"], "days": 30}, "name"),
        ({"name": "x", "scopes": [], "days": 30}, "scopes"),
        ({"name": "x", "scopes": ["admin:all"], "days": 30}, "scopes"),
        ({"name": "x", "scopes": ["events:read"], "days": 0}, "days"),
        ({"name": "x", "scopes": ["events:read"], "days": 366}, "days"),
    ],
)
def test_a_token_needs_a_name_known_scopes_and_an_expiry_within_a_year(user, kwargs, message):
    with pytest.raises(tokens.TokenRefused, match=message):
        tokens.create_access_token(user=user, **kwargs)
    assert not AccessToken.objects.exists()


def test_expired_revoked_or_inactive_tokens_do_not_work(user, other_user):
    expired, raw_expired = make(user)
    past = timezone.now() - timedelta(days=31)
    AccessToken.objects.filter(pk=expired.pk).update(created_at=past, expires_at=past + timedelta(days=30))
    revoked, raw_revoked = make(user)
    assert tokens.revoke_access_token(user=user, token_id=revoked.pk) is True
    assert tokens.revoke_access_token(user=other_user, token_id=revoked.pk) is False
    _, raw_inactive = make(other_user)
    other_user.is_active = False
    other_user.save()
    assert [tokens.authenticate_token(raw) for raw in (raw_expired, raw_revoked, raw_inactive)] == [None] * 3


# ── the API ───────────────────────────────────────────────────────────────────────────────────


def test_a_token_reads_without_a_session(user):
    EventFactory(public_id="evt-token-read")
    _, raw = make(user)
    response = Client().get("/api/events/evt-token-read", headers=bearer(raw))
    assert response.status_code == 200 and response.json()["event"]["id"] == "evt-token-read"


def test_a_token_writes_without_csrf_within_its_scope(user):
    EventFactory(public_id="evt-token-write")
    _, raw = make(user, scopes=("events:read", "saved:write", "registrations:write"))
    client = Client(enforce_csrf_checks=True)
    saved = client.put("/api/me/saved/evt-token-write", headers=bearer(raw))
    registered = client.post(
        "/api/events/evt-token-write/registration", content_type="application/json", headers=bearer(raw)
    )
    assert (saved.status_code, registered.status_code) == (201, 201)
    assert SavedEvent.objects.filter(user=user).count() == 1
    assert Registration.objects.filter(user=user).count() == 1


def test_a_write_outside_the_scope_is_refused_with_a_challenge(user):
    EventFactory(public_id="evt-token-scope")
    _, raw = make(user, scopes=("events:read",))
    response = Client().post(
        "/api/events/evt-token-scope/registration", content_type="application/json", headers=bearer(raw)
    )
    assert response.status_code == 403
    body = response.json()
    assert (body["code"], body["reason"], body["scope"]) == (
        "PERMISSION_DENIED",
        "INSUFFICIENT_SCOPE",
        "registrations:write",
    )
    assert 'error="insufficient_scope"' in response["WWW-Authenticate"]
    assert 'scope="registrations:write"' in response["WWW-Authenticate"]
    assert not Registration.objects.exists()


def test_a_read_needs_the_read_scope(user):
    EventFactory(public_id="evt-token-noread")
    _, raw = make(user, scopes=("saved:write",))
    response = Client().get("/api/events/evt-token-noread", headers=bearer(raw))
    assert (response.status_code, response.json()["reason"]) == (403, "INSUFFICIENT_SCOPE")


def test_an_unknown_token_is_401_invalid_token(db):
    response = Client().get("/api/events", headers=bearer("are_" + "x" * 36))
    assert response.status_code == 401
    assert (response.json()["code"], response.json()["reason"]) == ("AUTH_REQUIRED", "INVALID_TOKEN")
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_session_write_still_needs_csrf(user):
    EventFactory(public_id="evt-token-csrf")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.put("/api/me/saved/evt-token-csrf")
    assert (response.status_code, response.json()["reason"]) == (403, "CSRF_FAILED")


def test_anonymous_registration_carries_a_bearer_challenge(db):
    EventFactory(public_id="evt-token-anon")
    csrf = "c" * 32
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = csrf
    response = client.post(
        "/api/events/evt-token-anon/registration",
        content_type="application/json",
        headers={"X-CSRFToken": csrf},
    )
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="AgentReady Events"'


# ── My events, the command line, the admin ────────────────────────────────────────────────────


def test_the_tokens_page_makes_shows_once_lists_and_revokes(user):
    client = Client(headers=EN)
    client.force_login(user)
    assert 'href="/accounts/tokens/"' in client.get("/me/").content.decode()  # My events links to it
    empty = client.get("/accounts/tokens/")
    assert empty.status_code == 200 and "You have no access tokens." in empty.content.decode()
    response = client.post(
        "/accounts/tokens/", {"name": "laptop agent", "scopes": ["events:read", "saved:write"], "days": "90"}
    )
    html = response.content.decode()
    assert response.status_code == 200 and "shown only this once" in html
    token = AccessToken.objects.get(user=user)
    raw = html.split('id="new-token" class="token-value">')[1].split("<")[0]
    assert tokens.digest(raw) == token.digest and token.scopes == ["events:read", "saved:write"]
    assert token.expires_at - token.created_at == timedelta(days=90)
    page = client.get("/accounts/tokens/").content.decode()
    assert "laptop agent" in page and token.prefix in page and raw not in page
    revoked = client.post(f"/accounts/tokens/{token.pk}/revoke/")
    assert revoked.status_code == 302 and revoked["Location"] == "/accounts/tokens/"
    assert tokens.authenticate_token(raw) is None
    assert "laptop agent" not in client.get("/accounts/tokens/").content.decode()


def test_the_tokens_page_needs_a_session():
    response = Client().get("/accounts/tokens/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_someone_elses_token_cannot_be_revoked(user, other_user):
    token, raw = make(other_user)
    client = Client()
    client.force_login(user)
    client.post(f"/accounts/tokens/{token.pk}/revoke/")
    assert tokens.authenticate_token(raw) is not None


def test_making_a_token_needs_a_session_and_a_valid_form(user):
    assert (
        Client().post("/accounts/tokens/", {"name": "x", "scopes": ["events:read"], "days": "30"}).status_code
        == 302
    )
    client = Client(headers=EN)
    client.force_login(user)
    response = client.post("/accounts/tokens/", {"name": "x", "scopes": ["admin:all"], "days": "30"})
    assert response.status_code == 400 and not AccessToken.objects.exists()
    assert "admin:all" in response.content.decode()  # the refusal is said next to the form


def test_the_command_prints_the_token_on_its_last_line(user):
    out = StringIO()
    call_command(
        "create_access_token", "alice", "--scope", "events:read", "--days", "7", stdout=out, stderr=StringIO()
    )
    raw = out.getvalue().strip().splitlines()[-1]
    assert tokens.authenticate_token(raw).user == user
    with pytest.raises(CommandError):
        call_command("create_access_token", "nobody", "--scope", "events:read", stdout=StringIO())


def test_admins_see_tokens_but_never_their_secret(admin_client, user):
    token, raw = make(user)
    html = admin_client.get("/admin/accounts/accesstoken/").content.decode()
    assert token.prefix in html and raw not in html and token.digest not in html
    admin_client.post("/admin/accounts/accesstoken/", {"action": "revoke", "_selected_action": [token.pk]})
    assert tokens.authenticate_token(raw) is None
