"""The authorization server of `/mcp`, over HTTP with Django's test client: metadata, registration, the
authorization code flow with PKCE, refresh rotation and reuse, the audience rule, Deny, and pruning.
The whole flow with the SDK's OAuth client and a real browser is tests/browser/test_mcp_sign_in.py."""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from accounts.oauth.checks import issuer_is_https
from accounts.oauth.clients import prune_unused_clients
from accounts.tasks import clear_oauth_leftovers
from events.models import SavedEvent
from tests.factories import EventFactory
from tests.oauth import LOOPBACK_REDIRECT, pkce
from tests.tasks import run_tasks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ISSUER = "http://127.0.0.1:8000"
RESOURCE = f"{ISSUER}/mcp"
EN = {"Accept-Language": "en"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()


def register(client: Client | None = None, **metadata):
    body = {
        "client_name": "Test agent",
        "redirect_uris": [LOOPBACK_REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    body.update(metadata)
    return (client or Client()).post("/register", json.dumps(body), content_type="application/json")


def registered_client_id(**metadata) -> str:
    response = register(**metadata)
    assert response.status_code == 201, response.content
    return response.json()["client_id"]


def authorize_query(client_id: str, challenge: str, **extra) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": LOOPBACK_REDIRECT,
        "state": "st-123",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "events:read saved:write",
        "resource": RESOURCE,
    }
    query.update(extra)
    return "/authorize?" + urlencode({key: value for key, value in query.items() if value is not None})


def consent(browser: Client, client_id: str, challenge: str, *, allow: bool = True, **extra):
    page = browser.get(authorize_query(client_id, challenge, **extra), headers=EN)
    assert page.status_code == 200, page.content
    data = {key: value for key, value in page.context["form"].initial.items() if value is not None}
    if allow:
        data["allow"] = "on"
    return page, browser.post("/authorize", data, headers=EN)


def callback_query(response) -> dict[str, str]:
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == LOOPBACK_REDIRECT
    return {key: values[0] for key, values in parse_qs(location.query).items()}


def token_request(**data):
    return Client().post("/token", data)


def signed_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def tokens_for(user, *, scope: str = "events:read saved:write") -> tuple[str, dict]:
    """A whole authorization code flow for `user`; the client id and the token answer."""
    client_id = registered_client_id()
    verifier, challenge = pkce()
    _page, allowed = consent(signed_in(user), client_id, challenge, scope=scope)
    code = callback_query(allowed)["code"]
    answer = token_request(
        grant_type="authorization_code",
        code=code,
        redirect_uri=LOOPBACK_REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
        resource=RESOURCE,
    )
    assert answer.status_code == 200, answer.content
    return client_id, answer.json()


def mcp_call(token: str | None, name: str, arguments: dict):
    headers = MCP_HEADERS | ({"Authorization": f"Bearer {token}"} if token else {})
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return Client().post("/mcp", json.dumps(body), content_type="application/json", headers=headers)


# ── metadata ──────────────────────────────────────────────────────────────────────────────────


def test_the_server_metadata_says_what_mcp_clients_look_for():
    response = Client().get("/.well-known/oauth-authorization-server")
    meta = response.json()
    assert response["Access-Control-Allow-Origin"] == "*"
    assert meta["issuer"] == ISSUER
    assert (meta["authorization_endpoint"], meta["token_endpoint"], meta["registration_endpoint"]) == (
        f"{ISSUER}/authorize",
        f"{ISSUER}/token",
        f"{ISSUER}/register",
    )
    assert meta["response_types_supported"] == ["code"]
    assert meta["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert "none" in meta["token_endpoint_auth_methods_supported"]
    assert meta["client_id_metadata_document_supported"] is True
    assert meta["authorization_response_iss_parameter_supported"] is True
    assert meta["scopes_supported"] == [
        "checkin:write",
        "events:read",
        "payments:write",
        "registrations:manage",
        "registrations:write",
        "saved:write",
    ]


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_the_resource_metadata_names_mcp_and_its_authorization_server(path):
    response = Client().get(path)
    assert response.status_code == 200 and response["Access-Control-Allow-Origin"] == "*"
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "scopes_supported": [
            "checkin:write",
            "events:read",
            "payments:write",
            "registrations:manage",
            "registrations:write",
            "saved:write",
        ],
        "bearer_methods_supported": ["header"],
        "resource_name": "AgentReady Events",
    }
    assert Client().get("/.well-known/oauth-protected-resource/api").status_code == 404


def test_a_post_to_the_endpoints_is_never_redirected_to_add_a_slash():
    for path in ("/token", "/register"):
        assert Client().post(path, {}).status_code not in (301, 302, 308), path


# ── registration ──────────────────────────────────────────────────────────────────────────────


def test_a_cursor_shaped_registration_is_accepted_with_its_own_scheme():
    uris = [
        "cursor://anysphere.cursor-mcp/oauth/callback",
        "https://www.cursor.com/agents/mcp/oauth/callback",
        "http://localhost:8787/callback",
    ]
    response = register(client_name="Cursor", redirect_uris=uris)
    assert response.status_code == 201, response.content
    application = get_application_model().objects.get(client_id=response.json()["client_id"])
    assert application.redirect_uris.split() == uris and application.client_type == "public"


@pytest.mark.parametrize(
    "uri",
    ["javascript:alert(1)//", "data:text/html,hi", "http://evil.example/callback", "https://x.example/#frag"],
)
def test_a_redirect_uri_that_could_leak_the_code_is_refused(uri):
    response = register(redirect_uris=[LOOPBACK_REDIRECT, uri])
    assert response.status_code == 400 and response.json()["error"] == "invalid_redirect_uri"
    assert not get_application_model().objects.exists()


@pytest.mark.parametrize(
    "grants",
    [["client_credentials"], ["password"], ["implicit"], ["authorization_code", "client_credentials"]],
)
def test_a_grant_type_whose_tokens_are_refused_everywhere_is_refused_at_registration(grants):
    response = register(grant_types=grants)
    assert response.status_code == 400 and response.json()["error"] == "invalid_client_metadata"
    assert grants[-1] in response.json()["error_description"]
    assert not get_application_model().objects.exists()
    assert register(grant_types=["authorization_code", "refresh_token"]).status_code == 201


def test_an_update_may_not_switch_to_a_refused_grant_type():
    registered = register().json()
    answer = update(
        registered["client_id"],
        registered["registration_access_token"],
        redirect_uris=[LOOPBACK_REDIRECT],
        grant_types=["client_credentials"],
    )
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_client_metadata"


def update(client_id: str, token: str, **metadata):
    body = {"client_name": "Test agent", "token_endpoint_auth_method": "none", **metadata}
    return Client().put(
        f"/register/{client_id}",
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.mark.parametrize(
    "uri",
    ["javascript:alert(1)//", "data:text/html,hi", "http://evil.example/callback", "https://x.example/#frag"],
)
def test_an_update_is_held_to_the_registrations_redirect_uri_rule(uri):
    registered = register().json()
    client_id, token = registered["client_id"], registered["registration_access_token"]
    refused = update(client_id, token, redirect_uris=[uri])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_redirect_uri"
    application = get_application_model().objects.get(client_id=client_id)
    assert application.redirect_uris.split() == [LOOPBACK_REDIRECT]
    fine = update(client_id, token, redirect_uris=["https://agent.example/callback"])
    assert fine.status_code == 200, fine.content
    assert fine.json()["redirect_uris"] == ["https://agent.example/callback"]


def test_an_update_without_the_registration_token_is_refused_before_its_metadata_is_read():
    client_id = registered_client_id()
    answer = update(client_id, "not-the-token", redirect_uris=["http://evil.example/callback"])
    assert answer.status_code == 401


def test_registrations_are_rate_limited_per_address(settings):
    settings.OAUTH_REGISTRATION_RATE = "2/hour"
    assert [register().status_code for _ in range(3)] == [201, 201, 429]
    assert get_application_model().objects.count() == 2


def test_registrations_unused_for_the_window_are_pruned(user):
    old_unused = registered_client_id(client_name="old unused")
    old_used, _answer = tokens_for(user)
    fresh = registered_client_id(client_name="fresh")
    Application = get_application_model()
    Application.objects.filter(client_id__in=[old_unused, old_used]).update(
        created=timezone.now() - timedelta(days=31)
    )
    assert prune_unused_clients() == 1
    assert set(Application.objects.values_list("client_id", flat=True)) == {old_used, fresh}


def test_the_daily_task_deletes_expired_tokens_and_unused_registrations(user):
    DBTaskResult.objects.all().delete()
    unused = registered_client_id(client_name="never used")
    get_application_model().objects.filter(client_id=unused).update(
        created=timezone.now() - timedelta(days=31)
    )
    _client_id, body = tokens_for(user)
    get_refresh_token_model().objects.update(revoked=timezone.now() - timedelta(days=91))  # past its 90 days
    get_access_token_model().objects.filter(user=user).update(expires=timezone.now() - timedelta(days=1))
    clear_oauth_leftovers.enqueue()
    assert run_tasks() == 1
    assert not get_application_model().objects.filter(client_id=unused).exists()
    assert not get_access_token_model().objects.filter(user=user).exists()
    assert mcp_call(body["access_token"], "search_events", {}).status_code == 401
    [following] = DBTaskResult.objects.filter(task_path=clear_oauth_leftovers.module_path, status="READY")
    assert timedelta(hours=23, minutes=59) < following.run_after - timezone.now() <= timedelta(hours=24)


# ── the authorization code flow ───────────────────────────────────────────────────────────────


def test_sign_in_comes_first_then_the_consent_page_names_the_client_honestly(user):
    client_id = registered_client_id(client_name="Claude Code")
    _verifier, challenge = pkce()
    anonymous = Client().get(authorize_query(client_id, challenge))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/?next=")
    page = signed_in(user).get(authorize_query(client_id, challenge), headers=EN)
    text = page.content.decode()
    assert "Connect Claude Code?" in text
    assert "Unverified" in text  # registered itself
    assert "127.0.0.1" in text and "localhost" in text  # returns to this computer, and says so
    assert "Save and unsave events" in text and "Read events and my lists" in text
    assert "Register, cancel" not in text  # not asked for
    # The form may reach the client's redirect, on this page only.
    form_action = next(p for p in page["Content-Security-Policy"].split(";") if "form-action" in p)
    assert form_action.split() == ["form-action", "'self'", "http://127.0.0.1:53682"]
    assert "form-action 'self';" in Client().get("/accounts/login/")["Content-Security-Policy"] + ";"


def test_allow_gives_a_code_with_state_and_iss_and_the_token_saves_for_that_person(user):
    EventFactory(public_id="evt-oauth-save")
    client_id = registered_client_id()
    verifier, challenge = pkce()
    _page, allowed = consent(signed_in(user), client_id, challenge)
    query = callback_query(allowed)
    assert (query["state"], query["iss"]) == ("st-123", ISSUER) and query["code"]
    answer = token_request(
        grant_type="authorization_code",
        code=query["code"],
        redirect_uri=LOOPBACK_REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
        resource=RESOURCE,
    )
    assert answer.status_code == 200 and "no-store" in answer["Cache-Control"]
    body = answer.json()
    assert (
        body["token_type"] == "Bearer"
        and body["refresh_token"]
        and body["scope"] == "events:read saved:write"
    )
    saved = mcp_call(body["access_token"], "save_event", {"event_id": "evt-oauth-save"})
    assert saved.status_code == 200 and saved.json()["result"]["structuredContent"]["saved"] is True
    assert SavedEvent.objects.filter(user=user, event__public_id="evt-oauth-save").exists()
    assert get_access_token_model().objects.get(user=user).resource == [RESOURCE]


def test_the_code_needs_the_verifier_and_plain_pkce_is_refused(user):
    client_id = registered_client_id()
    _verifier, challenge = pkce()
    plain = signed_in(user).get(authorize_query(client_id, challenge, code_challenge_method="plain"))
    assert callback_query(plain)["error"] == "invalid_request"
    missing = signed_in(user).get(authorize_query(client_id, None, code_challenge_method=None))
    assert callback_query(missing)["error"] == "invalid_request"
    _page, allowed = consent(signed_in(user), client_id, challenge)
    wrong = token_request(
        grant_type="authorization_code",
        code=callback_query(allowed)["code"],
        redirect_uri=LOOPBACK_REDIRECT,
        client_id=client_id,
        code_verifier="not-the-verifier-" + "x" * 40,
    )
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"


def test_a_loopback_redirect_matches_on_any_port(user):
    client_id = registered_client_id()
    _verifier, challenge = pkce()
    other_port = "http://127.0.0.1:61999/callback"
    response = signed_in(user).get(authorize_query(client_id, challenge, redirect_uri=other_port), headers=EN)
    assert response.status_code == 200 and response.context["redirect_uri"] == other_port


def test_deny_returns_access_denied_with_state_and_iss(user):
    client_id = registered_client_id()
    _verifier, challenge = pkce()
    _page, denied = consent(signed_in(user), client_id, challenge, allow=False)
    assert callback_query(denied) == {"error": "access_denied", "state": "st-123", "iss": ISSUER}
    assert not get_access_token_model().objects.filter(user=user).exists()


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant(user):
    client_id, first = tokens_for(user)
    rotated = token_request(
        grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client_id
    )
    assert rotated.status_code == 200 and "no-store" in rotated["Cache-Control"]
    second = rotated.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert mcp_call(first["access_token"], "search_events", {}).status_code == 401  # the old one is gone
    reused = token_request(
        grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client_id
    )
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    # Reuse means the old token leaked: the whole grant is revoked, the rotated tokens too.
    assert mcp_call(second["access_token"], "search_events", {}).status_code == 401
    again = token_request(
        grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=client_id
    )
    assert again.json()["error"] == "invalid_grant"


# ── the audience ──────────────────────────────────────────────────────────────────────────────


def test_a_token_for_another_resource_is_never_issued(user):
    client_id = registered_client_id()
    _verifier, challenge = pkce()
    for other in ("https://other.example/mcp", f"{RESOURCE}-other", f"{RESOURCE}/"):
        refused = signed_in(user).get(authorize_query(client_id, challenge, resource=other))
        assert callback_query(refused)["error"] == "invalid_target", other


def test_a_request_without_resource_is_bound_to_mcp(user):
    client_id = registered_client_id()
    verifier, challenge = pkce()
    _page, allowed = consent(signed_in(user), client_id, challenge, resource=None)
    answer = token_request(
        grant_type="authorization_code",
        code=callback_query(allowed)["code"],
        redirect_uri=LOOPBACK_REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
    )
    assert answer.status_code == 200
    assert get_access_token_model().objects.get(user=user).resource == [RESOURCE]


def test_a_token_of_another_audience_is_401_at_mcp_and_an_mcp_token_is_no_token_on_the_api(user):
    _client_id, body = tokens_for(user)
    get_access_token_model().objects.filter(user=user).update(resource=["https://other.example/mcp"])
    refused = mcp_call(body["access_token"], "search_events", {})
    assert refused.status_code == 401 and 'error="invalid_token"' in refused["WWW-Authenticate"]
    get_access_token_model().objects.filter(user=user).update(resource=[RESOURCE])
    assert mcp_call(body["access_token"], "search_events", {}).status_code == 200
    api = Client().get("/api/me/saved", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert api.status_code == 401


# ── the challenges at /mcp ────────────────────────────────────────────────────────────────────


METADATA = f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource/mcp"'


def test_challenges_point_to_the_metadata_and_name_the_scope(user):
    EventFactory(public_id="evt-oauth-scope")
    anonymous = mcp_call(None, "save_event", {"event_id": "evt-oauth-scope"})
    assert anonymous.status_code == 401
    assert (
        METADATA in anonymous["WWW-Authenticate"] and 'scope="saved:write"' in anonymous["WWW-Authenticate"]
    )
    bad = mcp_call("not-a-token", "search_events", {})
    assert bad.status_code == 401
    assert METADATA in bad["WWW-Authenticate"] and 'error="invalid_token"' in bad["WWW-Authenticate"]
    _client_id, read_only = tokens_for(user, scope="events:read")
    short = mcp_call(read_only["access_token"], "save_event", {"event_id": "evt-oauth-scope"})
    assert short.status_code == 403
    challenge = short["WWW-Authenticate"]
    assert (
        'error="insufficient_scope"' in challenge
        and 'scope="saved:write"' in challenge
        and METADATA in challenge
    )
    assert not SavedEvent.objects.exists()


def test_reads_stay_open_and_tools_list_says_which_scope_each_tool_needs():
    search = mcp_call(None, "search_events", {})
    assert search.status_code == 200 and search.json()["result"]["structuredContent"]["ok"] is True
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    listed = Client().post("/mcp", json.dumps(body), content_type="application/json", headers=MCP_HEADERS)
    schemes = {tool["name"]: tool["_meta"]["securitySchemes"] for tool in listed.json()["result"]["tools"]}
    assert schemes["search_events"] == [{"type": "noauth"}, {"type": "oauth2", "scopes": ["events:read"]}]
    assert schemes["save_event"] == [{"type": "oauth2", "scopes": ["saved:write"]}]
    assert schemes["register_event"] == [{"type": "oauth2", "scopes": ["registrations:write"]}]


# ── the person's side ─────────────────────────────────────────────────────────────────────────


def test_connected_agents_lists_the_grant_and_revoke_ends_it(user):
    _client_id, body = tokens_for(user)
    assert mcp_call(body["access_token"], "search_events", {}).status_code == 200
    browser = signed_in(user)
    page = browser.get("/accounts/agents/", headers=EN).content.decode()
    assert "Test agent" in page and "Unverified" in page and "events:read, saved:write" in page
    assert "last used" in page
    application = get_application_model().objects.get(name="Test agent")
    revoked = browser.post(f"/accounts/agents/{application.pk}/revoke/", headers=EN)
    assert revoked.status_code == 302
    assert mcp_call(body["access_token"], "search_events", {}).status_code == 401
    assert not get_refresh_token_model().objects.filter(user=user, revoked__isnull=True).exists()
    assert "No agent is connected." in browser.get("/accounts/agents/", headers=EN).content.decode()


def test_one_person_cannot_revoke_anothers_agent(user, other_user):
    _client_id, body = tokens_for(user)
    application = get_application_model().objects.get()
    signed_in(other_user).post(f"/accounts/agents/{application.pk}/revoke/")
    assert mcp_call(body["access_token"], "search_events", {}).status_code == 200


def test_a_non_https_issuer_fails_the_system_check_unless_debug(settings):
    settings.DEBUG = False
    settings.OAUTH_ISSUER = "http://events.example.org"
    assert [error.id for error in issuer_is_https()] == ["accounts.E001"]
    settings.OAUTH_ISSUER = "https://events.example.org"
    assert issuer_is_https() == []
    settings.DEBUG, settings.OAUTH_ISSUER = True, "http://127.0.0.1:8000"
    assert issuer_is_https() == []


def test_the_consent_page_and_connected_agents_speak_traditional_chinese(user):
    client_id = registered_client_id(client_name="Claude Code")
    _verifier, challenge = pkce()
    browser = signed_in(user)
    page = browser.get(authorize_query(client_id, challenge), headers={"Accept-Language": "zh-Hant"})
    text = page.content.decode()
    assert "要連結 Claude Code 嗎？" in text and "未經驗證" in text and "允許" in text and "拒絕" in text
    assert "收藏及取消收藏活動" in text  # the scope, in words
    assert (
        "已連結的代理程式"
        in browser.get("/accounts/agents/", headers={"Accept-Language": "zh-Hant"}).content.decode()
    )
