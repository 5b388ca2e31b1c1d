"""Client ID metadata documents: a client whose id is an https URL is described by the document there.

The fetch is a request the server makes to an address a stranger chose, so it is refused before any
connection for what is not plainly a public https document: loopback, private and link-local
addresses, `http://`, a redirect, an oversized body. The documents themselves are served by a local
test server (tests.oauth.LocalMetadataFetcher stands in for the client's host; production's fetcher
never connects to a loopback address, which the first tests show).
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings
from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import get_application_model

from accounts.oauth.clients import ClientMetadataFetcher, public_client
from tests.oauth import LOOPBACK_REDIRECT, DocumentServer, LocalMetadataFetcher, pkce

from .test_oauth_server import authorize_query, callback_query, consent, signed_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EN = {"Accept-Language": "en"}


@pytest.fixture
def documents(settings):
    cache.clear()  # the toolkit's failure backoff lives there
    server = DocumentServer()
    LocalMetadataFetcher.LOCAL_PORT = server.port
    provider = dict(settings.OAUTH2_PROVIDER, CIMD_METADATA_FETCHER="tests.oauth.LocalMetadataFetcher")
    with override_settings(OAUTH2_PROVIDER=provider):
        yield server
    server.close()


def chatgpt_document(client_id: str) -> dict:
    """ChatGPT's shape: it declares private_key_jwt and also offers none."""
    return {
        "client_id": client_id,
        "client_name": "ChatGPT",
        "redirect_uris": [LOOPBACK_REDIRECT, "https://chatgpt.com/connector_platform_oauth_redirect"],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "private_key_jwt",
        "token_endpoint_auth_methods_supported": ["private_key_jwt", "none"],
    }


# ── what production's fetcher refuses before connecting ───────────────────────────────────────


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "10.0.0.7",
        "192.168.1.2",
        "172.16.0.1",
        "169.254.169.254",
        "[::ffff:127.0.0.1]",
    ],
)
def test_a_client_id_at_a_loopback_private_or_link_local_address_is_refused_unasked(host):
    server = DocumentServer()  # listening on loopback: nothing must reach it
    try:
        with pytest.raises(CIMDError):
            ClientMetadataFetcher().fetch(f"https://{host}:{server.port}/client.json")
    finally:
        server.close()
    assert sum(server.hits.values()) == 0


@pytest.mark.parametrize(
    "client_id",
    ["http://clients.example/client.json", "https://clients.example", "https://u:p@clients.example/c.json"],
)
def test_a_client_id_that_is_not_a_plain_https_document_url_is_refused(client_id):
    with pytest.raises(CIMDError):
        ClientMetadataFetcher().fetch(client_id)


# ── the documents ─────────────────────────────────────────────────────────────────────────────


def test_a_document_that_offers_none_is_a_public_client():
    document = chatgpt_document("https://chatgpt.example/oauth/client.json")
    assert public_client(document)["token_endpoint_auth_method"] == "none"
    confidential = {**document, "token_endpoint_auth_methods_supported": ["private_key_jwt"]}
    assert public_client(confidential)["token_endpoint_auth_method"] == "private_key_jwt"


def test_chatgpts_document_is_accepted_and_the_consent_page_names_its_host(documents, user):
    client_id = "https://chatgpt.example/oauth/client.json"
    documents.document("/oauth/client.json", chatgpt_document(client_id))
    _verifier, challenge = pkce()
    page, allowed = consent(signed_in(user), client_id, challenge)
    text = page.content.decode()
    assert "Connect ChatGPT (chatgpt.example)?" in text and "Unverified" not in text
    assert callback_query(allowed)["code"]
    application = get_application_model().objects.get(client_id=client_id)
    assert (application.client_type, application.registration_source) == ("public", "cimd")
    assert documents.hits["/oauth/client.json"] == 1
    signed_in(user).get(authorize_query(client_id, challenge), headers=EN)
    assert documents.hits["/oauth/client.json"] == 1  # cached


def authorize_is_refused(user, client_id: str) -> None:
    _verifier, challenge = pkce()
    response = signed_in(user).get(authorize_query(client_id, challenge), headers=EN)
    assert response.status_code in (400, 401), response.status_code  # shown to the person, never redirected
    assert "This sign-in cannot go on" in response.content.decode()
    assert not get_application_model().objects.filter(client_id=client_id).exists()


def test_a_redirecting_document_is_refused_and_its_target_never_asked(documents, user):
    documents.routes["/moved.json"] = (
        302,
        {"Location": f"http://127.0.0.1:{documents.port}/target.json"},
        b"",
    )
    documents.document("/target.json", chatgpt_document("https://clients.example/moved.json"))
    authorize_is_refused(user, "https://clients.example/moved.json")
    assert documents.hits["/target.json"] == 0


def test_an_oversized_document_is_refused(documents, user):
    client_id = "https://clients.example/big.json"
    documents.document("/big.json", {**chatgpt_document(client_id), "padding": "x" * 9000})
    authorize_is_refused(user, client_id)


def test_a_document_for_another_client_id_or_a_javascript_redirect_is_refused(documents, user):
    documents.document("/other.json", chatgpt_document("https://clients.example/someone-else.json"))
    authorize_is_refused(user, "https://clients.example/other.json")
    evil = {
        **chatgpt_document("https://clients.example/evil.json"),
        "redirect_uris": ["javascript:alert(1)//"],
    }
    documents.document("/evil.json", evil)
    authorize_is_refused(user, "https://clients.example/evil.json")
