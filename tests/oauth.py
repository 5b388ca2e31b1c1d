"""Helpers for the OAuth tests: PKCE, the settings of a site at another address, a registered client,
and a client ID metadata fetcher that reaches a local test server (tests only: production's fetcher
never connects to a loopback address)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from oauth2_provider.cimd import CIMDError

from accounts.oauth.clients import ClientMetadataFetcher, check_redirect_uris, public_client

LOOPBACK_REDIRECT = "http://127.0.0.1:53682/callback"


def pkce() -> tuple[str, str]:
    """A code verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def site_settings(site_url: str) -> dict[str, Any]:
    """The settings of the site served at `site_url` (issuer, MCP resource, toolkit's copies of them),
    for `override_settings` around a live server at a random port."""
    issuer = site_url.rstrip("/")
    provider = dict(settings.OAUTH2_PROVIDER)
    provider.update(
        OIDC_ISS_ENDPOINT=issuer,
        OAUTH2_PROTECTED_RESOURCE_IDENTIFIER=f"{issuer}/mcp",
        OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS=[issuer],
    )
    return {
        "SITE_URL": issuer,
        "OAUTH_ISSUER": issuer,
        "MCP_RESOURCE": f"{issuer}/mcp",
        "OAUTH2_PROVIDER": provider,
    }


class LocalMetadataFetcher(ClientMetadataFetcher):
    """Fetches `https://<any host>/<path>` from `http://127.0.0.1:<LOCAL_PORT>/<path>`: the local test
    server stands in for the client's host. The size limit, no redirects, the JSON check, the
    public-client and redirect-URI rules are production's own (`_read_document`, `public_client`)."""

    LOCAL_PORT = 0

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parts = urlsplit(client_id)
        if parts.scheme != "https":
            raise CIMDError("client_id URL must use the https scheme")
        pool = urllib3.HTTPConnectionPool("127.0.0.1", self.LOCAL_PORT, timeout=5, retries=False)
        try:
            response = pool.urlopen("GET", parts.path, redirect=False, preload_content=False)
            try:
                metadata, max_age = self._read_document(response)
            finally:
                response.release_conn()
        finally:
            pool.close()
        metadata = public_client(metadata)
        check_redirect_uris(metadata)
        return metadata, max_age


class DocumentServer:
    """A local HTTP server: path → (status, headers, body); counts the requests each path got."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.hits: Counter[str] = Counter()
        routes, hits = self.routes, self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits[self.path] += 1
                status, headers, body = routes.get(self.path, (404, {}, b"{}"))
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        # A short poll: shutdown() waits for the loop to look, 0.5 s a test with the default.
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()

    def document(self, path: str, document: dict, **headers: str) -> None:
        self.routes[path] = (200, headers, json.dumps(document).encode())

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
