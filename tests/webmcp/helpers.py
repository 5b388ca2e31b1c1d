"""Requests as a page would see them (resolved against the project's URLs, with page state), and an
HTML reader that splits markup as a browser's tokenizer would."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from django.http import HttpRequest
from django.test import RequestFactory
from django.urls import resolve
from django_webmcp.registry import ToolContext


def page_request(path: str) -> HttpRequest:
    request = RequestFactory().get(path)
    request.resolver_match = resolve(path)
    return request


def page_context(path: str, **state: Any) -> ToolContext:
    request = page_request(path)
    match = request.resolver_match
    return ToolContext(request=request, url_name=match.view_name, url_kwargs=match.kwargs, state=state)


BREAKOUT = "</script><script>alert(1)</script>"


class Elements(HTMLParser):
    """Every element's tag, attributes and text, as a browser's tokenizer would split them."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.elements: list[dict[str, Any]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append({"tag": tag, "attrs": dict(attrs), "text": ""})

    def handle_data(self, data: str) -> None:
        if self.elements:
            self.elements[-1]["text"] += data
