"""`Idempotency-Key` on every REST write, as the IETF httpapi draft "The Idempotency-Key HTTP Header
Field" has it (and Stripe before it): a client that sends a write again, not knowing whether the first
one arrived, gets the first answer again and nothing is done twice.

- The same key with the same request (method, path and query, body; JSON compared as data) answers
  the first answer again: its status, body and headers, with `Idempotent-Replayed: true`. Nothing is
  performed, and no Activity row is written: the first request's row is the call's.
- The same key with another request is 422 `IDEMPOTENCY_KEY_REUSED`; nothing is done.
- The same key while the first request is still running is 409 `IDEMPOTENCY_KEY_IN_USE`; nothing is
  done, and the same request later gets the first answer.
- Keys are the caller's own (a person, or a visitor's session), kept IDEMPOTENCY_KEY_HOURS (24) and
  then pruned by the worker (`core.tasks.prune_idempotency_keys`). A caller with neither account nor
  session yet has nothing to keep a key under: its request is performed as if it sent none.

An answer is kept when the request was decided (a success or a refusal, 4xx); an outage, an unexpected
error (5xx) or the write rate (429) performed nothing, so the key is released and the same request may
run again. A first request whose process died while running holds its key ABANDONED_AFTER at most.

The one place: `IdempotentWrites`, the base of every REST view that writes (a test walks the API's
routes). It claims the key after authentication, so a refused credential or CSRF token claims nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from django.utils.crypto import salted_hmac
from rest_framework.request import Request
from rest_framework.views import APIView

from .errors import IdempotencyKeyInUse, IdempotencyKeyInvalid, IdempotencyKeyReused
from .models import IdempotencyKey
from .visitors import visitor_from_request

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
#: The methods that write; a key on any other is ignored, as the draft says.
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: A key is 1 to 255 visible ASCII characters (a UUID is the usual one).
VALID_KEY = re.compile(r"[\x21-\x7e]{1,255}")
#: A first request still "running" after this long died with its process: the key is taken over.
ABANDONED_AFTER = timedelta(minutes=5)
#: Headers never replayed: the replay's own transport, and what says it is one.
NOT_REPLAYED = frozenset({"content-length", "date", "set-cookie", REPLAYED.lower()})


@dataclass(frozen=True)
class _Claim:
    record: IdempotencyKey


class _Replay(Exception):
    """Raised from `initial` to answer with a kept answer instead of running the view."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__("replay")
        self.response = response


def kept_for() -> timedelta:
    return timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)


def caller_of(request: HttpRequest) -> str | None:
    """A digest of who calls (the person, or the visitor's session token), or None for a visitor with
    neither yet. Keyed with the site's secret: the table says nothing of who anyone is."""
    key = visitor_from_request(request).key
    if not key:
        return None
    return salted_hmac("core.idempotency.caller", key, algorithm="sha256").hexdigest()


def fingerprint(request: HttpRequest, body: bytes) -> str:
    """The request a key stands for: method, path with query, and body (JSON compared as data, so the
    order of keys and the spaces do not matter)."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    except ValueError:
        canonical = body
    material = b"\n".join([(request.method or "").encode(), request.get_full_path().encode(), canonical])
    return hashlib.sha256(material).hexdigest()


def claim(*, caller: str, key: str, fingerprint: str) -> _Claim | IdempotencyKey:
    """The key for this request: claimed now (`_Claim`: perform it, then `keep` its answer), or the
    kept record of the same request (replay it). Raises IdempotencyKeyReused for another request and
    IdempotencyKeyInUse while the first one runs. The claim commits at once (its own transaction), so
    a concurrent request sees it; the unique constraint lets exactly one of them claim."""
    for _attempt in range(3):
        try:
            with transaction.atomic():
                return _Claim(IdempotencyKey.objects.create(caller=caller, key=key, fingerprint=fingerprint))
        except IntegrityError:
            pass
        found = IdempotencyKey.objects.filter(caller=caller, key=key).first()
        if found is None:  # pruned between the two statements: claim again
            continue
        now = timezone.now()
        if found.created_at < now - kept_for():  # past its time, not pruned yet: as if never sent
            IdempotencyKey.objects.filter(pk=found.pk, created_at=found.created_at).delete()
            continue
        if found.fingerprint != fingerprint:
            raise IdempotencyKeyReused()
        if found.status is not None:
            return found
        if found.created_at < now - ABANDONED_AFTER:  # its request died with its process
            taken = IdempotencyKey.objects.filter(pk=found.pk, status=None, created_at=found.created_at)
            if taken.update(created_at=now):
                found.created_at = now
                return _Claim(found)
        raise IdempotencyKeyInUse()
    raise IdempotencyKeyInUse()


def keep(claimed: _Claim, response: HttpResponseBase) -> None:
    """Keep the answer of a claimed request (a decided one, 2xx–4xx but 429), or release the key."""
    record = claimed.record
    status = response.status_code
    if status >= 500 or status == 429 or not isinstance(response, HttpResponse):
        IdempotencyKey.objects.filter(pk=record.pk, status=None).delete()
        return
    render = getattr(response, "render", None)
    if callable(render):
        render()
    headers = {name: value for name, value in response.items() if name.lower() not in NOT_REPLAYED}
    IdempotencyKey.objects.filter(pk=record.pk).update(status=status, headers=headers, body=response.content)


def release(claimed: _Claim) -> None:
    IdempotencyKey.objects.filter(pk=claimed.record.pk, status=None).delete()


def replay(record: IdempotencyKey) -> HttpResponse:
    response = HttpResponse(bytes(record.body), status=record.status or 200)
    for name, value in record.headers.items():
        response[name] = value
    response[REPLAYED] = "true"
    return response


def prune(*, now: Any = None) -> int:
    """Delete the keys older than IDEMPOTENCY_KEY_HOURS; how many went."""
    cutoff = (now or timezone.now()) - kept_for()
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted


class IdempotentWrites(APIView):
    """The base of every REST view that writes: its PUT, POST, PATCH and DELETE honour an
    `Idempotency-Key` (the module says how). Reads are untouched."""

    _idempotency: _Claim | None = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication, CSRF, permissions first
        self._idempotency = None
        key = request.META.get("HTTP_IDEMPOTENCY_KEY")
        if request.method not in WRITES or key is None:
            return
        if not VALID_KEY.fullmatch(key):
            raise IdempotencyKeyInvalid()
        caller = caller_of(request)
        if caller is None:
            return
        django_request = request._request  # the body as sent (DRF has not read it yet)
        found = claim(caller=caller, key=key, fingerprint=fingerprint(django_request, django_request.body))
        if isinstance(found, _Claim):
            self._idempotency = found
        else:
            raise _Replay(replay(found))

    def handle_exception(self, exc: Exception) -> Any:
        if isinstance(exc, _Replay):
            return exc.response
        return super().handle_exception(exc)

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        claimed, self._idempotency = self._idempotency, None
        if claimed is not None:
            keep(claimed, response)
        return response

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:  # an answer that never reached finalize_response: the key is free again
            claimed, self._idempotency = self._idempotency, None
            if claimed is not None:
                release(claimed)
