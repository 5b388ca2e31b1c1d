"""`django_webmcp.responses`: how a page route reads a tool call and answers it in one response."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import HttpResponse, QueryDict
from django.test import RequestFactory
from django.utils.cache import patch_vary_headers
from django_webmcp.registry import PAGE_HEADER, RESULT_ELEMENT_ID, TOOL_HEADER
from django_webmcp.responses import (
    MalformedToolInput,
    calling_page,
    tool_call,
    tool_input,
    tool_refusal,
    with_tool_result,
)

from tests.webmcp.helpers import BREAKOUT, Elements

pytestmark = pytest.mark.unit

factory = RequestFactory()


def post(body: bytes | str, method: str = "post") -> Any:
    return getattr(factory, method)("/events/evt-a/save/", data=body, content_type="application/json")


def assert_private(response: HttpResponse) -> None:
    """A tool answer is for one visitor and one call: never cached, and keyed on the tool header."""
    cache_control = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"no-cache", "no-store", "must-revalidate", "private", "max-age=0"} <= cache_control
    assert TOOL_HEADER in [part.strip() for part in response["Vary"].split(",")]


# ---- tool_call -------------------------------------------------------------------------------------


def test_the_header_names_the_tool_of_the_call() -> None:
    assert TOOL_HEADER == "X-WebMCP-Tool"
    assert tool_call(factory.get("/events/", headers={"X-WebMCP-Tool": "search_events"})) == "search_events"
    assert tool_call(factory.post("/x/", headers={"x-webmcp-tool": "a.b-c_9"})) == "a.b-c_9"
    assert tool_call(factory.get("/", headers={TOOL_HEADER: "x" * 128})) == "x" * 128


def test_a_request_without_the_header_is_a_persons() -> None:
    assert tool_call(factory.get("/events/")) is None
    assert tool_call(factory.get("/events/", headers={TOOL_HEADER: ""})) is None


@pytest.mark.parametrize(
    "name",
    [
        "search events",
        "x" * 129,
        "search_events\n",
        " search_events",
        "a/b",
        "<script>",
        "réserver",
        "search_events;drop",
    ],
)
def test_a_header_that_is_no_tool_name_is_no_tool_call(name: str) -> None:
    """Only what a browser could have registered counts: anything else is a person's request."""
    request = factory.get("/events/")
    request.META["HTTP_X_WEBMCP_TOOL"] = name
    assert tool_call(request) is None


# ---- tool_input ------------------------------------------------------------------------------------


def test_a_get_calls_input_is_its_query_string_kept_as_a_querydict() -> None:
    request = factory.get("/events/?query=WebMCP&location=taipei&location=online")
    data = tool_input(request)
    assert isinstance(data, QueryDict)
    assert data is request.GET
    assert data["query"] == "WebMCP"
    assert data.getlist("location") == ["taipei", "online"]  # left for validation to refuse


def test_a_head_calls_input_is_its_query_string() -> None:
    assert tool_input(factory.head("/events/?level=beginner")) == QueryDict("level=beginner")


def test_a_get_ignores_any_body() -> None:
    request = factory.generic(
        "GET", "/events/?query=x", data=b'{"query": "y"}', content_type="application/json"
    )
    assert tool_input(request)["query"] == "x"


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_a_write_with_an_empty_body_has_no_input(method: str) -> None:
    assert tool_input(post(b"", method)) == {}


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_a_writes_input_is_its_json_object(method: str) -> None:
    body = {"note": "今天", "count": 2, "nested": {"a": [1, None]}, "flag": False}
    data = tool_input(post(json.dumps(body), method))
    assert data == body
    assert not isinstance(data, QueryDict)


def test_a_write_with_an_empty_object_has_no_input() -> None:
    assert tool_input(post(b"{}")) == {}


@pytest.mark.parametrize("body", [b"[]", b'["a"]', b"null", b"1", b'"text"', b"true"])
def test_a_write_whose_json_is_not_an_object_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedToolInput, match="object"):
        tool_input(post(body))


@pytest.mark.parametrize("body", [b"{", b"not json", b"{'a': 1}", b"\xff\xfe{}", b'{"a": 1} trailing'])
def test_a_write_whose_body_is_not_json_is_malformed(body: bytes) -> None:
    with pytest.raises(MalformedToolInput, match="JSON"):
        tool_input(post(body))


def test_malformed_input_is_a_value_error() -> None:
    """Callers that map ValueError (bad input) keep working."""
    assert issubclass(MalformedToolInput, ValueError)


# ---- with_tool_result ------------------------------------------------------------------------------


REGION = '<main id="main" data-webmcp-region><p>Region</p></main>'
RESULT = {
    "ok": True,
    "title": BREAKOUT,
    "note": "Tom & Jerry <3 'quotes' \"double\"",
    "中文": "活動",
    "nested": {"list": [1, 2.5, None, True], "empty": {}},
    "line": "a\u2028b",
}


def island_of(response: HttpResponse) -> dict[str, Any]:
    elements = Elements(response.content.decode())
    [island] = [element for element in elements.elements if element["attrs"].get("id") == RESULT_ELEMENT_ID]
    assert island["tag"] == "script"
    assert island["attrs"] == {"id": "webmcp-result", "type": "application/json"}
    return json.loads(island["text"])


def test_the_result_follows_the_region_as_a_json_island() -> None:
    response = with_tool_result(HttpResponse(REGION), {"ok": True, "count": 0})
    html = response.content.decode()
    assert html.startswith(REGION)  # the region is left as it was, the island comes after it
    assert html.count("<script") == 1
    assert island_of(response) == {"ok": True, "count": 0}


def test_the_island_is_escaped_json_that_parses_back_to_the_result() -> None:
    response = with_tool_result(HttpResponse(REGION), RESULT)
    html = response.content.decode()
    assert "</script><script>" not in html
    assert html.count("</script>") == 1  # no text in the result closes the island early
    assert "<3" not in html and "& Jerry" not in html  # <, > and & are escaped inside the island
    assert island_of(response) == RESULT


def test_the_result_may_be_any_mapping() -> None:
    from types import MappingProxyType

    response = with_tool_result(HttpResponse(REGION), MappingProxyType({"ok": True}))
    assert island_of(response) == {"ok": True}


def test_push_url_becomes_the_pages_new_address() -> None:
    response = with_tool_result(HttpResponse(REGION), {"ok": True}, push_url="/events/?query=WebMCP")
    assert response["HX-Push-Url"] == "/events/?query=WebMCP"


def test_without_push_url_the_address_stays() -> None:
    response = with_tool_result(HttpResponse(REGION), {"ok": True})
    assert not response.has_header("HX-Push-Url")


def test_a_tool_answer_is_never_cached_and_varies_on_the_tool_header() -> None:
    page = HttpResponse(REGION)
    patch_vary_headers(page, ("HX-Request",))
    response = with_tool_result(page, {"ok": True})
    assert response is page
    assert_private(response)
    assert "HX-Request" in response["Vary"]  # what the page varied on is kept
    assert response.status_code == 200


# ---- tool_refusal ----------------------------------------------------------------------------------


ENVELOPE = {
    "ok": False,
    "code": "NOT_FOUND",
    "reason": "EVENT_NOT_FOUND",
    "message": "找不到活動 & <nothing>",
    "nextAction": "Search first.",
    "retryable": False,
    "uiUpdated": False,
    "stateVersion": 3,
}


@pytest.mark.parametrize("status", [400, 401, 404, 409, 429])
def test_a_refusal_is_the_envelope_alone_with_its_status(status: int) -> None:
    response = tool_refusal(ENVELOPE, status=status)
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    assert json.loads(response.content) == ENVELOPE
    assert b"<main" not in response.content and RESULT_ELEMENT_ID.encode() not in response.content
    assert not response.has_header("HX-Push-Url")
    assert_private(response)


def test_a_refusal_keeps_non_ascii_text_readable() -> None:
    content = tool_refusal(ENVELOPE, status=404).content.decode()
    assert "找不到活動" in content


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("http://testserver/events/?location=taipei", "/events/?location=taipei"),
        ("http://testserver/me/", "/me/"),
        ("/events/evt-a/", "/events/evt-a/"),
        ("https://elsewhere.example/me/", ""),  # another site's page never picks what is redrawn
        ("//elsewhere.example/me/", ""),
        ("javascript:alert(1)", ""),
        ("", ""),
    ],
)
def test_the_calling_page_is_a_page_of_this_site_or_nothing(page: str, expected: str) -> None:
    request = factory.post("/events/evt-a/save/", headers={PAGE_HEADER: page} if page else {})
    assert calling_page(request) == expected
