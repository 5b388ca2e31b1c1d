"""An agent signs in as the MCP clients people use do (E3): the official Python SDK's OAuth client
(`OAuthClientProvider`) against `/mcp` over real HTTP, and a real Chromium in which the person signs in
and presses Allow. Once by dynamic registration (Cursor's way), once by a client ID metadata document
(Claude's and VS Code's way) served by a local test server; then the agent saves and registers for that
person, and the registration still waits for the person's confirmation.

The SDK runs in a thread of its own (its event loop), Playwright's sync API in the test's: the SDK hands
the authorization URL over, the browser hands back where the site redirected after Allow.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from django.test import override_settings
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from events.choices import RegistrationStatus
from events.models import Activity, Registration, SavedEvent
from tests.oauth import DocumentServer, LocalMetadataFetcher, site_settings

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "correct-horse-battery"  # tests.factories.UserFactory's
CALLBACK_PORT = 53791
CALLBACK = f"http://127.0.0.1:{CALLBACK_PORT}/callback"


class MemoryStorage:
    """The SDK's TokenStorage, in memory (a real client keeps it in its own settings)."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class AgentRun:
    results: list[Any] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)
    storage: MemoryStorage = field(default_factory=MemoryStorage)
    error: BaseException | None = None


def run_agent(
    mcp_url: str, event_id: str, *, client_metadata_url: str | None, urls: queue.Queue, callbacks: queue.Queue
):
    """The SDK client in a thread: connect, save `event_id`, register for it (preview, then confirmed)."""
    run = AgentRun()

    async def redirect_handler(url: str) -> None:
        urls.put(url)

    async def callback_handler() -> AuthorizationCodeResult:
        location = await asyncio.to_thread(callbacks.get, timeout=90)
        query = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def record(request: httpx2.Request) -> None:
        run.requests.append(request)

    async def agent() -> None:
        provider = OAuthClientProvider(
            server_url=mcp_url,
            client_metadata=OAuthClientMetadata(client_name="SDK agent", redirect_uris=[CALLBACK]),
            storage=run.storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
            client_metadata_url=client_metadata_url,
        )
        http = httpx2.AsyncClient(
            auth=provider, timeout=httpx2.Timeout(30, read=120), event_hooks={"request": [record]}
        )
        async with http, Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client:
            run.results.append(await client.call_tool("save_event", {"event_id": event_id}))
            preview = await client.call_tool("register_event", {"event_id": event_id})
            run.results.append(preview)
            confirmation = preview.structured_content["confirmation"]
            arguments = {"event_id": event_id, "confirmation": confirmation}
            run.results.append(await client.call_tool("register_event", arguments))

    def main() -> None:
        try:
            asyncio.run(agent())
        except BaseException as error:
            run.error = error
            urls.put(None)

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    return run, thread


class Person:
    """The person's browser (one context: signed in once, it stays signed in, as a real one does)."""

    def __init__(self, browser, user) -> None:
        self.user = user
        self.context = browser.new_context(locale="en-US", extra_http_headers={"Accept-Language": "en"})
        self.reached: list[str] = []
        self.consents: list[str] = []

    def callback(self, route) -> None:
        self.reached.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>You can close this window.</p>")

    def allow(self, url: str) -> str:
        """Open the authorization URL, sign in if asked, read the consent page, press Allow; returns
        where the site sent the browser back (the client's callback)."""
        page = self.context.new_page()
        page.set_default_timeout(15_000)
        page.route(f"http://127.0.0.1:{CALLBACK_PORT}/**", self.callback)
        try:
            page.goto(url)
            if "/accounts/login/" in page.url:
                page.fill("input[name=username]", self.user.username)
                page.fill("input[name=password]", PASSWORD)
                page.click("main button[type=submit]")
            page.wait_for_selector("#authorizationForm")
            self.consents.append(page.inner_text("main"))
            before = len(self.reached)
            page.click("button[name=allow]")
            page.wait_for_function("document.body.innerText.includes('You can close this window')")
            assert len(self.reached) == before + 1, "the browser never reached the client's callback"
            return self.reached[-1]
        finally:
            page.close()


def connect_and_act(server: str, browser, user, event_id: str, *, client_metadata_url: str | None = None):
    """The SDK client acts; each time it asks for the person's consent (the first call, then a step-up
    for a scope it did not have), the person allows it in the browser."""
    urls: queue.Queue = queue.Queue()
    callbacks: queue.Queue = queue.Queue()
    run, thread = run_agent(
        f"{server}/mcp", event_id, client_metadata_url=client_metadata_url, urls=urls, callbacks=callbacks
    )
    person = Person(browser, user)
    try:
        while thread.is_alive():
            try:
                url = urls.get(timeout=1)
            except queue.Empty:
                continue
            if url is None:
                break
            callbacks.put(person.allow(url))
        thread.join(timeout=60)
    finally:
        person.context.close()
    assert not thread.is_alive(), "the SDK client did not finish"
    if run.error is not None:
        raise AssertionError("the SDK client failed") from run.error
    return run, person


def assert_acted_for_the_person(run: AgentRun, user, event, server: str, *, client: str) -> None:
    saved, preview, registered = run.results
    assert saved.structured_content["saved"] is True
    assert preview.structured_content["code"] == "CONFIRMATION_REQUIRED"  # the person confirms first
    assert registered.structured_content["registration"]["status"] == RegistrationStatus.CONFIRMED
    assert SavedEvent.objects.filter(user=user, event=event).exists()
    assert Registration.objects.get(user=user, event=event).status == RegistrationStatus.CONFIRMED
    # Activity knows which connected client acted (the readiness dashboard counts calls per client).
    rows = Activity.objects.filter(user=user, mode="mcp", outcome="OK").values_list("action", "client")
    assert sorted(rows) == [("register_event", client), ("save_event", client)]
    token_requests = [r for r in run.requests if r.url.path == "/token"]
    assert token_requests, "no token request was made"
    assert all(
        f"resource={server}/mcp".replace(":", "%3A").replace("/", "%2F") in r.content.decode()
        for r in token_requests
    )


def test_the_sdk_client_signs_in_by_dynamic_registration(server, browser, orm, make_user, make_event):
    user = make_user("oauth-dcr")
    event = make_event("evt-oauth-dcr", capacity=5)
    with override_settings(**site_settings(server)):
        run, person = connect_and_act(server, browser, user, event.public_id)
    # Asked twice: to save (the first call's scope), then to register (a step-up, on the 403).
    first, second = person.consents
    assert "Connect SDK agent?" in first and "Unverified" in first
    assert "localhost" in first  # it returns to a program on this computer
    assert "Save and unsave events" in first and "Register, cancel" not in first
    assert "Register, cancel and use waiting lists" in second
    assert all(parse_qs(urlsplit(location).query)["iss"] == [server] for location in person.reached)
    assert_acted_for_the_person(run, user, event, server, client="SDK agent")
    assert run.storage.client is not None and not run.storage.client.client_id.startswith("https://")


def test_the_sdk_client_signs_in_by_a_client_id_metadata_document(
    server, browser, orm, make_user, make_event
):
    user = make_user("oauth-cimd")
    event = make_event("evt-oauth-cimd", capacity=5)
    client_id = "https://agents.example/sdk-agent.json"
    documents = DocumentServer()
    documents.document(
        "/sdk-agent.json",
        {
            "client_id": client_id,
            "client_name": "SDK agent",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        },
    )
    LocalMetadataFetcher.LOCAL_PORT = documents.port
    settings = site_settings(server)
    settings["OAUTH2_PROVIDER"]["CIMD_METADATA_FETCHER"] = "tests.oauth.LocalMetadataFetcher"
    try:
        with override_settings(**settings):
            run, person = connect_and_act(
                server, browser, user, event.public_id, client_metadata_url=client_id
            )
    finally:
        documents.close()
    assert all("Connect SDK agent (agents.example)?" in text for text in person.consents)
    assert not any("Unverified" in text for text in person.consents)
    assert documents.hits["/sdk-agent.json"] >= 1
    assert run.storage.client is not None and run.storage.client.client_id == client_id
    assert not [r for r in run.requests if r.url.path == "/register"]  # no registration needed
    assert_acted_for_the_person(run, user, event, server, client="SDK agent (agents.example)")
