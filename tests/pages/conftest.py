"""Fixtures for the page tests: English clients (assertions read English source strings)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client

EN = {"Accept-Language": "en"}
HTMX = {"HX-Request": "true"}
#: Attributes of declarative WebMCP forms (the browser would register such a form as a tool).
DECLARATIVE_TOOL_ATTRIBUTES = (
    "toolname",
    "tooldescription",
    "tooltitle",
    "toolautosubmit",
    "toolparamdescription",
)


def manifest_in(html: str) -> dict[str, Any]:
    """The WebMCP manifest a page or region carries (exactly one)."""
    [text] = re.findall(r'<script id="webmcp-manifest" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(text)


def manifest_tools(html: str) -> dict[str, dict[str, Any]]:
    """The manifest's tools by name."""
    return {tool["name"]: tool for tool in manifest_in(html)["tools"]}


@pytest.fixture
def en_client(db) -> Client:
    return Client(headers=EN)


@pytest.fixture
def signed_in_en_client(user) -> Client:
    client = Client(headers=EN)
    client.force_login(user)
    return client
