"""The API's renderer (orjson) writes DRF's JSONRenderer's bytes, byte for byte."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.serializer_helpers import ReturnDict

from core.renderers import OrjsonRenderer

pytestmark = pytest.mark.unit

SAMPLES = {
    "search answer": {
        "ok": True,
        "count": 1,
        "events": [
            {"id": "evt-a", "title": "工作坊 “引號” </script>", "startsAt": "2027-01-01T10:00:00+08:00"}
        ],
        "appliedFilters": {"query": 'a\\b"c\nd\te\u0001'},
        "stateVersion": 0,
    },
    "line separators": {"summary": "before\u2028middle\u2029after"},
    "lazy translation": {"message": gettext_lazy("Sign in to register.")},
    "decimal and datetime": {
        "amount": Decimal("350"),
        "at": datetime(2027, 1, 1, 2, 3, 4, 567890, tzinfo=UTC),
    },
    "numbers and nulls": {
        "big": 2**53 + 1,
        "negative": -7,
        "none": None,
        "float": 1.5,
        "list": [1, [2, []], {}],
    },
    "emoji and escapes": {"text": "🎉 / \\ \u007f \u00e9"},
    "a ReturnDict": ReturnDict({"ok": False, "code": "INVALID_INPUT"}, serializer=None),
}


@pytest.mark.parametrize("data", SAMPLES.values(), ids=SAMPLES.keys())
def test_the_bytes_are_drfs(data):
    assert OrjsonRenderer().render(data) == JSONRenderer().render(data)


def test_an_indent_asked_for_is_honoured_as_drf_does():
    media_type = "application/json; indent=2"
    data = SAMPLES["search answer"]
    assert OrjsonRenderer().render(data, media_type) == JSONRenderer().render(data, media_type)
    assert b"\n  " in OrjsonRenderer().render(data, media_type)


@pytest.mark.parametrize(
    "media_type", [None, "", "application/json", "application/json; indent=4", "application/json; q=1"]
)
@pytest.mark.parametrize("context", [None, {}, {"indent": 2}])
def test_every_media_type_and_context_renders_drfs_bytes(media_type, context):
    data = SAMPLES["search answer"]
    assert OrjsonRenderer().render(data, media_type, context) == JSONRenderer().render(
        data, media_type, context
    )


def test_nothing_renders_as_no_body():
    assert OrjsonRenderer().render(None) == JSONRenderer().render(None) == b""
