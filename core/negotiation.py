"""The API's content negotiation: DRF's own, with its answer given at once in the common case.

The API has one renderer (`core.renderers.OrjsonRenderer`). A request that sends no `Accept`, `*/*`
or exactly that renderer's media type, and no format override, can only get that renderer with its
own media type, which is what DRF's negotiation returns after parsing the header and ordering its
media types by precedence on every request. Anything else (other media types, parameters such as
`indent`, a `?format=`, a view with several renderers) goes through DRF's negotiation unchanged, with
its 406 and 404. tests/api/test_negotiation.py compares the two.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class OneRendererNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        if len(renderers) == 1 and format_suffix is None and not self._format_asked(request):
            [renderer] = renderers
            if request.META.get("HTTP_ACCEPT", "*/*") in ("*/*", renderer.media_type):
                return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)

    def _format_asked(self, request: Request) -> Any:
        override = self.settings.URL_FORMAT_OVERRIDE
        return override and override in request.query_params
