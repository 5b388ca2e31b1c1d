"""Conditional GET: a read that is asked for far more often than it changes answers `304 Not Modified`
from a validator computed before the answer is built, and says who may keep the answer.

The caller knows what its answer is made of and reads that in a statement or two (a revision, the
newest change); this module turns it into an `ETag` (and, where every change leaves a time behind, a
`Last-Modified`), answers 304 when the request's `If-None-Match` (or, without it, `If-Modified-Since`)
still holds (RFC 9110 §13.2.2, by Django's own `get_conditional_response`), and otherwise builds the
answer. Both answers carry the same validators, `Cache-Control` and `Vary` (RFC 9110 §15.4.5), so a
cache that revalidates keeps what it may keep.

Who may keep it (`Cache-Control`):

- `shared`: the same for every visitor who sends what the request sent (no account, no saved state, no
  CSRF token in it): `public, max-age=PUBLIC_MAX_AGE`, so a CDN or a proxy may serve it that long
  without asking; after that, a revalidation costs the caller's few statements and a 304.
- otherwise: `private, no-cache`: only the visitor's own browser keeps it, and asks again every time.

`Vary: Cookie, Accept-Language` on both: the session (the visitor, their saves) and the language
choose what is said.

Generic: it knows no app; the calendar feeds, the pages and the API give it their own parts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils import translation
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.crypto import salted_hmac
from django.utils.http import http_date, quote_etag

#: What every conditional answer varies by, besides what a caller adds.
VARY = ("Cookie", "Accept-Language")


@dataclass(frozen=True)
class Validators:
    """What a conditional request is answered from, before the answer is built."""

    etag: str
    last_modified: datetime | None = None


def etag(request: HttpRequest, parts: Iterable[Any]) -> str:
    """A digest of what an answer is built from, with what else its text depends on: the language of
    its words and the site's address in its links.

    Keyed with the site's secret (an HMAC), so parts that are the visitor's own (their session's CSRF
    secret, a token) can be mixed in: the ETag says nothing about them, and nobody can make one up."""
    material = [translation.get_language(), request.build_absolute_uri("/"), list(parts)]
    text = json.dumps(material, default=str, separators=(",", ":"))
    return salted_hmac("core.conditional.etag", text, algorithm="sha256").hexdigest()[:32]


def answer[Built: HttpResponseBase](
    request: HttpRequest,
    validators: Validators,
    build: Callable[[], Built],
    *,
    shared: bool,
    max_age: int | None = None,
    vary: Iterable[str] = (),
) -> Built | HttpResponse:
    """304 when the request's validators still hold; otherwise what `build` makes. A success carries
    the validators; every answer carries `Cache-Control` (`shared`: see the module) and `Vary`.

    An answer that is not a success (a 404, the error envelope) gets no validator: there is nothing a
    cache should keep."""
    quoted, seconds = quote_etag(validators.etag), _seconds(validators)
    response: Built | HttpResponse | None = get_conditional_response(
        request, etag=quoted, last_modified=seconds
    )
    if response is None:
        response = build()
    if 200 <= response.status_code < 300 or response.status_code == 304:
        response.headers.setdefault("ETag", quoted)
        if seconds is not None:
            response.headers.setdefault("Last-Modified", http_date(seconds))
    return cache_headers(response, shared=shared, max_age=max_age, vary=vary)


def cache_headers[Answer: HttpResponseBase](
    response: Answer, *, shared: bool, max_age: int | None = None, vary: Iterable[str] = ()
) -> Answer:
    """`Cache-Control` and `Vary` as the module says (`max_age`: PUBLIC_MAX_AGE unless given); `shared`
    with a max-age of 0 is kept private."""
    max_age = settings.PUBLIC_MAX_AGE if max_age is None else max_age
    if shared and max_age > 0 and 200 <= response.status_code < 400:
        patch_cache_control(response, public=True, max_age=max_age)
    else:
        patch_cache_control(response, private=True, no_cache=True)
    patch_vary_headers(response, (*VARY, *vary))
    return response


def _seconds(validators: Validators) -> int | None:
    moment = validators.last_modified
    return int(moment.timestamp()) if moment is not None else None
