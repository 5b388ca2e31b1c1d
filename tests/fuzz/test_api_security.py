"""Schemathesis with every one of its checks, `ignored_auth` included, against the API's own OpenAPI
document (E2): as an anonymous visitor, with a personal access token that has every scope, and with a
token of each single scope (`events:read`, `saved:write`, `registrations:write`, `checkin:write`,
`registrations:manage`, `payments:write`).

`ignored_auth` is what holds each operation's `security` to the API: where the document names no
empty requirement `{}` (anonymous not accepted), a 2xx with the token must turn into a 401 or 403 when
the check sends the same request again without it, and again with an invalid one; a 2xx without any
credential fails at once. It runs in-process through the Python API (`from_wsgi`): the token is given
to `validate_response` as the request's headers, which is how the check knows it was the caller's own
credential and may take it away; its probes go to the same WSGI application. The other direction
(what the document says anonymous may do, it may; the scope it names is the one a token needs) is
`tests/api/test_openapi_security.py`.

Every case is also held to the conformance checks of `test_api_schema.py`, and to the rest of
schemathesis's checks (`--checks all`): schema-valid input must be accepted, invalid input refused.
Writes keep the write rate off (`writes_unthrottled`), and the pause after too many bad tokens is lifted
for the run: the check's invalid-token probes would otherwise pause the valid token too, and every
later answer would be a 429. Both limits are tested where they live (tests/api, tests/accounts).
The cases are the derandomized profile's (tests/fuzz/conftest.py); `HYPOTHESIS_PROFILE=explore` draws
fresh ones. The same runs against a served site are docs/fuzzing.md's.
"""

from __future__ import annotations

import contextlib
from collections import Counter

import pytest
import schemathesis
from django.conf import settings as django_settings
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import CHECKS, load_all_checks

from accounts import lockout
from accounts.tokens import create_access_token
from config.wsgi import application
from events.choices import StaffRole
from events.models import Event, EventStaff
from events.scopes import Scope
from tests.factories import UserFactory
from tests.fuzz.conftest import own_idempotency_key

pytestmark = pytest.mark.fuzz

load_all_checks()
#: `--checks all`: every check schemathesis has, the same fourteen its CLI lists (the ones that need a
#: stateful run or the coverage phase's cases pass over the others).
ALL_CHECKS = list(CHECKS.get_all())
EXAMPLES = 30  # per operation, per id source (generated / seeded) and per mode (valid / invalid input)
MINIMUM_CASES = 1000
#: A token of one scope (six runs): the operations that name its scope get EXAMPLES each, the others,
#: which refuse it at the scope check, this many.
EXAMPLES_OTHER_SCOPE = 5
MINIMUM_CASES_ONE_SCOPE = 250
ALL_SCOPES = "every scope"
CALLERS = ["anonymous", ALL_SCOPES, *Scope.values]
CSRF_TOKEN = "f" * 32  # Django accepts the unmasked 32-character secret as the header token


@pytest.fixture
def api_schema(db, in_process_wsgi):
    return schemathesis.openapi.from_wsgi("/api/schema/", application)


@pytest.fixture
def token_pause_lifted(monkeypatch):
    """The pause after 20 bad tokens from one client (tests/accounts/test_sign_in_limits.py)."""
    monkeypatch.setattr(lockout, "TOKEN_FAILURE_LIMIT", 10**9)


@pytest.fixture
def callers(seeded, writes_unthrottled, token_pause_lifted) -> dict[str, tuple[dict, dict]]:
    """Headers and cookies per caller. The anonymous visitor is a browser tab without a session: only
    the CSRF cookie and header, so its writes reach the API rather than the CSRF check. The tokens are a
    script's, no cookie: one with every scope, and one of each scope alone; their person manages every
    event (the door's, the approvals' and the payments' calls answer)."""
    person = UserFactory(username="fuzzer")
    EventStaff.objects.bulk_create(
        EventStaff(event=event, user=person, role=StaffRole.MANAGER) for event in Event.objects.all()
    )
    found = {
        "anonymous": (
            {"X-CSRFToken": CSRF_TOKEN, "Accept": "application/json"},
            {django_settings.CSRF_COOKIE_NAME: CSRF_TOKEN},
        )
    }
    for name, scopes in [(ALL_SCOPES, list(Scope.values)), *((scope, [scope]) for scope in Scope.values)]:
        _, raw = create_access_token(user=person, name=f"fuzz {name}", scopes=scopes, days=1)
        found[name] = ({"Authorization": f"Bearer {raw}", "Accept": "application/json"}, {})
    return found


#: Refusals of a schema-valid body that only the event can foresee: its questions (the `answers` object)
#: and its ticket types and payment methods are its own, which one document for every event cannot list.
PER_EVENT = {"ANSWERS_INVALID", "TICKET_TYPE_REQUIRED", "TICKET_TYPE_UNKNOWN", "PAYMENT_METHOD_UNAVAILABLE"}


def _checks_for(response) -> list:
    """Every check, but for input refused because it does not fit that event: an event's questions,
    ticket types and payment methods are its own, which one document for every event cannot list, so
    a schema-valid body may still be refused (400 with the reason, documented, and each field's code)."""
    if response.status_code == 400 and _reason(response) in PER_EVENT:
        return [check for check in ALL_CHECKS if check.__name__ != "positive_data_acceptance"]
    return ALL_CHECKS


def _reason(response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return body.get("reason", "") if isinstance(body, dict) else ""


def _scopes_named(operation) -> set[str]:
    """The token scopes the operation's `security` names (empty: no token may call it)."""
    return {
        scope
        for requirement in operation.definition.raw.get("security", [])
        for scope in requirement.get("accessToken", [])
    }


def _open_to_anyone(operation) -> bool:
    return {} in operation.definition.raw.get("security", [])


@pytest.mark.parametrize("caller", CALLERS)
def test_api_keeps_its_documented_security_and_contract(api_schema, operation_strategies, callers, caller):
    headers, cookies = callers[caller]
    one_scope = caller in Scope.values
    calls: Counter[str] = Counter()
    statuses: Counter[tuple[str, int]] = Counter()
    scope_refusals: Counter[str] = Counter()
    operations = [result.ok() for result in api_schema.get_all_operations()]

    for operation in operations:
        examples = EXAMPLES_OTHER_SCOPE if one_scope and caller not in _scopes_named(operation) else EXAMPLES
        for strategy in operation_strategies(operation):

            @settings(max_examples=examples, suppress_health_check=list(HealthCheck))
            @given(case=strategy)
            def run(case):
                own_idempotency_key(case)
                response = case.call(headers=headers, cookies=cookies)
                case.validate_response(response, checks=_checks_for(response), headers=headers)
                calls[case.operation.label] += 1
                statuses[(case.operation.label, response.status_code)] += 1
                if _reason(response) == "INSUFFICIENT_SCOPE":
                    scope_refusals[case.operation.label] += 1

            # No invalid input can be written for some operations (test_api_schema.py says which).
            with contextlib.suppress(Unsatisfiable):
                run()

    print(f"\nschemathesis ({caller}, all checks): {sum(calls.values())} cases", dict(calls))
    print("statuses:", dict(sorted(statuses.items())))
    assert sum(calls.values()) >= (MINIMUM_CASES_ONE_SCOPE if one_scope else MINIMUM_CASES), calls
    assert len(calls) == len(operations), calls
    if one_scope:
        _assert_the_scope_opens_its_operations_and_no_other(operations, statuses, scope_refusals, caller)


def _assert_the_scope_opens_its_operations_and_no_other(
    operations, statuses: Counter[tuple[str, int]], scope_refusals: Counter[str], scope: str
) -> None:
    """A token of one scope is never refused for its scope by an operation that names it, and is served
    by no operation that names only other scopes (never a 2xx there)."""
    for operation in operations:
        answered = {status for label, status in statuses if label == operation.label}
        if scope in _scopes_named(operation):
            assert not scope_refusals[operation.label], (operation.label, scope_refusals)
        elif not _open_to_anyone(operation):
            assert not {status for status in answered if 200 <= status < 300}, (operation.label, answered)
            assert scope_refusals[operation.label], (operation.label, answered)
