"""Requests as a page would see them: resolved against the project's URLs, with page state."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.test import RequestFactory
from django.urls import resolve

from webmcp.registry import ToolContext


def page_request(path: str) -> HttpRequest:
    request = RequestFactory().get(path)
    request.resolver_match = resolve(path)
    return request


def page_context(path: str, **state: Any) -> ToolContext:
    request = page_request(path)
    match = request.resolver_match
    return ToolContext(request=request, url_name=match.view_name, url_kwargs=match.kwargs, state=state)
