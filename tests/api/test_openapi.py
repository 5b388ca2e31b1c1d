"""The OpenAPI document is valid OpenAPI 3, lists every endpoint and documents the envelope."""

import pytest
from django.core.management import call_command
from drf_spectacular.validation import validate_schema

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ENDPOINTS = {
    ("/api/events", "get"): "search_events",
    ("/api/events/{event_id}", "get"): "get_event_details",
    ("/api/me/saved", "get"): "list_saved",
    ("/api/me/saved/{event_id}", "put"): "save_event",
    ("/api/me/saved/{event_id}", "delete"): "unsave_event",
    ("/api/events/{event_id}/registration", "post"): "register_event",
    ("/api/events/{event_id}/registration", "delete"): "cancel_registration",
    ("/api/events/{event_id}/registration/answers", "put"): "update_registration_answers",
    ("/api/registrations/{registration_id}/approve", "post"): "approve_registration",
    ("/api/registrations/{registration_id}/decline", "post"): "decline_registration",
    ("/api/registrations/{registration_id}/staff-answers", "put"): "update_staff_answers",
    ("/api/me/registrations", "get"): "list_registrations",
    ("/api/events/{event_id}/waitlist", "post"): "join_waitlist",
    ("/api/events/{event_id}/waitlist", "delete"): "leave_waitlist",
    ("/api/me/waitlist", "get"): "list_waitlist",
    ("/api/events/{event_id}/check-ins", "post"): "check_in_attendee",
    ("/api/events/{event_id}/check-ins", "get"): "find_attendee",
    ("/api/me/export", "get"): "export_personal_data",
    ("/api/events/{event_id}/registration/payment-report", "post"): "report_payment",
    ("/api/events/{event_id}/payments/{attendee_id}/confirm", "post"): "confirm_payment",
    ("/api/events/{event_id}/payments/{attendee_id}/refund", "post"): "refund_payment",
}


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    with django_db_blocker.unblock():
        from drf_spectacular.generators import SchemaGenerator

        return SchemaGenerator().get_schema(request=None, public=True)


def test_openapi_document_validates_as_openapi_3(schema):
    validate_schema(schema)  # raises on an invalid document
    assert schema["openapi"].startswith("3.")


def test_openapi_lists_every_endpoint_with_its_operation_id(schema):
    found = {
        (path, method): operation["operationId"]
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
    }
    assert found == ENDPOINTS


def test_openapi_documents_the_error_envelope_and_codes_per_endpoint(schema):
    envelope = schema["components"]["schemas"]["ErrorEnvelope"]
    assert {"ok", "code", "reason", "message", "nextAction", "retryable"} <= set(envelope["properties"])
    register = schema["paths"]["/api/events/{event_id}/registration"]["post"]["responses"]
    assert {"201", "200", "401", "403", "409", "429", "500"} <= set(register)
    assert register["409"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorEnvelope")
    search = schema["paths"]["/api/events"]["get"]
    assert {param["name"] for param in search["parameters"]} == {
        "query",
        "location",
        "price",
        "level",
        "limit",
        "offset",
    }


def test_schema_and_docs_ui_are_served_from_local_files(client):
    assert client.get("/api/schema/").status_code == 200
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html and "cdn" not in html.lower() and "https://" not in html


def test_spectacular_command_validates_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))


def test_every_write_operation_documents_the_idempotency_key_and_its_answers(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            headers = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
            if method in ("post", "put", "patch", "delete"):
                assert headers == ["Idempotency-Key"], (path, method)
                assert {"400", "409", "422"} <= set(operation["responses"]), (path, method)
                assert "IDEMPOTENCY_KEY_REUSED" in operation["responses"]["422"]["description"]
                assert "IDEMPOTENCY_KEY_IN_USE" in operation["responses"]["409"]["description"]
                successes = [answer for status, answer in operation["responses"].items() if status < "300"]
                assert all("Idempotent-Replayed" in answer["headers"] for answer in successes)
            else:
                assert headers == [], (path, method)
