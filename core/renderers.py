"""The API's JSON renderer: DRF's bytes, encoded by orjson.

DRF's JSONRenderer (compact, UTF-8, U+2028/U+2029 escaped for embedding in a page) spends most of its
time in the standard library's encoder. orjson writes the same bytes for the types our bodies hold;
anything else (lazy translations, decimals, datetimes, which DRF's encoder turns into its own
strings) goes through DRF's encoder, and a requested indentation falls back to DRF itself.
tests/api/test_renderer.py compares the two byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

_ENCODER = JSONEncoder()
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


class OrjsonRenderer(JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        # An indent is asked for by a media type parameter or the context: the plain media type (what
        # DRF's negotiation gives nearly every request) has none to parse.
        context = renderer_context or {}
        plain = accepted_media_type in (None, "", self.media_type) and not context.get("indent")
        if not plain and self.get_indent(accepted_media_type or "", context):
            return super().render(data, accepted_media_type, renderer_context)
        body = orjson.dumps(data, default=_ENCODER.default, option=_OPTIONS)
        if b"\xe2\x80\xa8" in body or b"\xe2\x80\xa9" in body:  # as DRF: safe inside <script>
            body = body.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return body
