"""Each operation's `security` in the OpenAPI document says how the API may be called, and the API
agrees, for every operation the document lists (E2).

`tests/fuzz/test_api_security.py` (schemathesis's `ignored_auth`) proves one direction: what the
document says needs a credential does. These prove the other: where the document names the empty
requirement `{}`, an anonymous visitor is served; where it does not, they are told to sign in (401);
the session is accepted everywhere; and the scope the document names for the token is the one the
token needs, no other.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from accounts.tokens import create_access_token
from events.actions import ACTIONS
from events.choices import StaffRole
from events.models import EventStaff
from events.scopes import Scope
from tests.api.conftest import ApiClient

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

#: What a call sends besides its path: the check-in's body names a ticket (that none holds); the report
#: of a transfer its digits and date.
BODIES = {
    "check_in_attendee": {"ticket": "no-such-ticket"},
    "update_staff_answers": {"answers": {}},
    "report_payment": {"accountLast5": "12345", "paidOn": "2026-01-05"},
}


@pytest.fixture
def document():
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(document) -> list[tuple[str, str, dict]]:
    return [
        (path, method, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


#: An operation no token may call (an organiser's decision, a person's report of their transfer): its
#: row names no scope, and the document names no token scope for it.
NO_TOKEN = {name for name, row in ACTIONS.items() if row.scope is None}


def _call(client, method: str, path: str, event, operation: dict, **headers):
    url = path.replace("{event_id}", event.public_id).replace("{registration_id}", "1")
    url = url.replace("{attendee_id}", "1")
    body = BODIES.get(operation["operationId"])
    if isinstance(client, ApiClient) and method != "get":
        return client.write(method, url, body, **headers)
    meta = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
    data = "" if body is None else json.dumps(body)
    return client.generic(method.upper(), url, data=data, content_type="application/json", **meta)


def _bearer(user, scopes: list[str]) -> str:
    return "Bearer " + create_access_token(user=user, name="contract", scopes=scopes, days=1)[1]


def test_every_operation_says_how_it_may_be_called(document):
    schemes = set(document["components"]["securitySchemes"])
    assert schemes == {"accessToken", "cookieAuth"}
    for path, method, operation in _operations(document):
        security = operation["security"]
        named = {name for requirement in security for name in requirement}
        assert named <= schemes, (path, method)
        assert {"cookieAuth": []} in security, (path, method)  # the session works everywhere
        token = [requirement["accessToken"] for requirement in security if "accessToken" in requirement]
        if operation["operationId"] in NO_TOKEN:
            assert token == [], (path, method)
            continue
        assert len(token) == 1 and len(token[0]) == 1 and token[0][0] in Scope.values, (path, method)


def test_anonymous_visitors_are_served_exactly_where_the_document_says(document, event):
    anonymous_ok, sign_in = [], []
    for path, method, operation in _operations(document):
        response = _call(ApiClient(), method, path, event, operation)
        if {} in operation["security"]:
            assert response.status_code < 400, (path, method, response.content)
            anonymous_ok.append(operation["operationId"])
        else:
            assert response.status_code == 401, (path, method, response.content)
            assert response.json()["code"] == "AUTH_REQUIRED"
            sign_in.append(operation["operationId"])
    # The three that schemathesis first found documented as needing a credential are open.
    assert {"search_events", "get_event_details", "list_saved"} <= set(anonymous_ok)
    assert "register_event" in sign_in


def test_a_signed_in_session_is_never_asked_to_sign_in(document, event, user):
    EventStaff.objects.create(event=event, user=user, role=StaffRole.MANAGER)
    session = ApiClient()
    session.force_login(user)
    for path, method, operation in _operations(document):
        response = _call(session, method, path, event, operation)
        assert response.status_code != 401, (path, method, response.content)


def test_the_token_needs_the_scope_the_document_names_and_no_other(document, event, user):
    EventStaff.objects.create(event=event, user=user, role=StaffRole.MANAGER)  # the door answers
    for path, method, operation in _operations(document):
        if operation["operationId"] in NO_TOKEN:  # every token is refused
            refused = _call(
                Client(), method, path, event, operation, authorization=_bearer(user, Scope.values)
            )
            assert refused.status_code == 403 and refused.json()["reason"] == "INSUFFICIENT_SCOPE", path
            continue
        (needed,) = next(r["accessToken"] for r in operation["security"] if "accessToken" in r)
        others = [scope for scope in Scope.values if scope != needed]
        refused = _call(Client(), method, path, event, operation, authorization=_bearer(user, others))
        assert refused.status_code == 403, (path, method, refused.content)
        assert refused.json()["reason"] == "INSUFFICIENT_SCOPE"
        served = _call(Client(), method, path, event, operation, authorization=_bearer(user, [needed]))
        assert served.status_code not in (401, 403), (path, method, served.content)
