"""The site's URLs plus the bench's bare view, the ceiling the API's throughput is compared with.

The bare view is a plain Django view behind the same middleware, on the same server: it reads nothing
from the database and returns, unchanged, a JSON body captured from the API before the load starts
(its path is in BENCH_BARE_BODY), so both sides send the same number of bytes.
"""

import functools
import os
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.urls import include, path

from config import urls as site_urls


@functools.cache
def bare_body() -> bytes:
    return Path(os.environ["BENCH_BARE_BODY"]).read_bytes()


def bare(request: HttpRequest) -> HttpResponse:
    return HttpResponse(bare_body(), content_type="application/json")


urlpatterns = [
    path("bench/bare", bare, name="bench-bare"),
    path("", include(site_urls)),
]

handler404 = site_urls.handler404
handler500 = site_urls.handler500
