"""Schemathesis against the API's own OpenAPI document (E2): every documented operation, generated input.

The schema is read from `/api/schema/` through the WSGI application, and every case is sent there
in-process as a browser tab would send it: the CSRF cookie with the same token in `X-CSRFToken`, and
either a signed-in session or none, so write paths are reached rather than stopped at the CSRF check.
Path ids are drawn both from the seeded catalogue (so saves, registrations and conflicts happen) and
freely (so id validation is fuzzed too). Valid and invalid input are both generated.

Every response must not be a 5xx, must use a status code the operation documents, must be JSON as
documented and match the documented body schema, and invalid input must be refused with a 4xx.
Evidence levels (E1–E4): docs/evidence.md.
"""

from __future__ import annotations

from collections import Counter

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application
from tests.factories import UserFactory
from tests.fuzz.conftest import own_idempotency_key

pytestmark = pytest.mark.fuzz

CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Examples per operation, per id source (generated / seeded) and per mode (valid / invalid input):
# about 1 400 cases in all, well over the minimum below (`make fuzz` draws fresh ones for a longer hunt).
EXAMPLES = 40
MINIMUM_CASES = 1000
CSRF_TOKEN = "f" * 32  # Django accepts the unmasked 32-character secret as the header token
HEADERS = {"X-CSRFToken": CSRF_TOKEN, "Accept": "application/json"}
OPERATION_IDS = [
    "search_events",
    "get_event_details",
    "save_event",
    "unsave_event",
    "register_event",
    "cancel_registration",
    "list_saved",
    "list_registrations",
    "join_waitlist",
    "leave_waitlist",
    "list_waitlist",
    "check_in_attendee",
    "find_attendee",
    "export_personal_data",
    "update_registration_answers",
    "approve_registration",
    "decline_registration",
    "report_payment",
    "confirm_payment",
    "refund_payment",
    "update_staff_answers",
]


@pytest.fixture
def api_schema(db, in_process_wsgi):
    return schemathesis.openapi.from_wsgi("/api/schema/", application)


@pytest.fixture
def visitors(seeded, writes_unthrottled, in_process_wsgi) -> dict[str, dict[str, str]]:
    """Cookies of two browser tabs: a signed-in person's, and an anonymous visitor's (may save, not
    register). Both carry the CSRF cookie; every request sends the same token in `X-CSRFToken`."""
    client = Client()
    client.force_login(UserFactory(username="fuzzer"))
    session = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    csrf = {django_settings.CSRF_COOKIE_NAME: CSRF_TOKEN}
    return {"signed-in": {django_settings.SESSION_COOKIE_NAME: session, **csrf}, "anonymous": csrf}


def test_every_operation_is_fuzzed(api_schema):
    """The list below drives the per-operation tests; a new endpoint must join it."""
    documented = sorted(
        result.ok().definition.raw["operationId"] for result in api_schema.get_all_operations()
    )
    assert documented == sorted(OPERATION_IDS)


def test_api_conforms_to_its_openapi_document(api_schema, operation_strategies, visitors):
    calls: Counter[str] = Counter()
    statuses: Counter[tuple[str, int]] = Counter()
    no_invalid_input: list[str] = []

    for operation in (result.ok() for result in api_schema.get_all_operations()):
        for strategy in operation_strategies(operation):

            @settings(max_examples=EXAMPLES, suppress_health_check=list(HealthCheck))
            @given(case=strategy, visitor=st.sampled_from(sorted(visitors)))
            def run(case, visitor):
                own_idempotency_key(case)
                response = case.call(headers=HEADERS, cookies=visitors[visitor])
                case.validate_response(
                    response, checks=[*CONFORMANCE, negative_data_rejection], headers=HEADERS
                )
                calls[case.operation.label] += 1
                statuses[(case.operation.label, response.status_code)] += 1

            try:
                run()
            except Unsatisfiable:
                # No invalid input can be written from the document: the list endpoints take no
                # parameters, and `event_id` is documented as any string (the view checks its format).
                no_invalid_input.append(operation.label)

    print(f"\nschemathesis: {sum(calls.values())} cases", dict(calls))
    print("statuses:", dict(sorted(statuses.items())))
    print("no invalid input expressible for:", no_invalid_input)
    assert sum(calls.values()) >= MINIMUM_CASES, calls
    assert len(calls) == len(OPERATION_IDS), calls


@pytest.mark.parametrize("operation_id", OPERATION_IDS)
def test_unknown_query_parameter_is_a_documented_400(api_schema, visitors, operation_id):
    """Unknown parameters are refused, never ignored; the refusal is documented (docs/agent-contract.md)."""
    operation = api_schema.find_operation_by_id(operation_id)
    known = {"event_id": "evt-webmcp-intro", "registration_id": 1, "attendee_id": 1}
    path_parameters = {param.name: known[param.name] for param in operation.path_parameters}
    case = operation.Case(path_parameters=path_parameters, query={"unexpected": "1"})
    response = case.call(headers=HEADERS, cookies=visitors["signed-in"])
    assert response.status_code == 400, response.text
    assert response.json()["reason"] == "UNKNOWN_PARAMETER"
    case.validate_response(response, checks=CONFORMANCE, headers=HEADERS)
