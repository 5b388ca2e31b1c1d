"""The API's content negotiation (core/negotiation.py) answers as DRF's own for every Accept header
and format override, the common ones without parsing them."""

from __future__ import annotations

import pytest
from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from core.negotiation import OneRendererNegotiation
from core.renderers import OrjsonRenderer

pytestmark = pytest.mark.unit

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    " application/json",
    "application/json; indent=4",
    "application/*",
    "application/json, text/html;q=0.9",
    "text/html",
    "text/html, */*;q=0.1",
    "*/*; indent=2",
    "",
    "application/xml",
    "application/json;q=0",
]
QUERIES = ["", "?format=json", "?format=xml", "?format=", "?location=taipei"]
RENDERER_SETS = [
    [OrjsonRenderer()],
    [JSONRenderer()],
    [OrjsonRenderer(), BrowsableAPIRenderer()],
]


def negotiated(negotiation, accept: str | None, query: str, renderers, suffix: str | None):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get(f"/api/events{query}", **headers))
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers, suffix)
    except (NotAcceptable, Http404) as refused:
        return type(refused).__name__
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("renderers", RENDERER_SETS, ids=["orjson", "drf json", "two renderers"])
@pytest.mark.parametrize("suffix", [None, "json", "api"])
def test_every_accept_header_and_format_gets_drfs_answer(renderers, suffix):
    for accept in ACCEPTS:
        for query in QUERIES:
            ours = negotiated(OneRendererNegotiation(), accept, query, renderers, suffix)
            drfs = negotiated(DefaultContentNegotiation(), accept, query, renderers, suffix)
            assert ours == drfs, (accept, query)
