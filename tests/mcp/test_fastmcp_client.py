"""Registration questions over `/mcp` with fastmcp's `Client`, a second client besides the SDK's own
(tests/mcp/test_register_event_questions.py, whose event this reuses): what agents built on fastmcp
see. Its default connection (`mode="auto"`) finds the 2026-07-28 era by `server/discover`;
`get_event_details` gives the questions and the answers' schema; `register_event` without the required
answers asks the person through fastmcp's form elicitation handler (the input-required rounds of
2026-07-28), and the registration holds what they typed; pinned to the 2025-11-25 handshake it is
never asked, and the refusal lists what is missing."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult

from events.choices import RegistrationStatus
from events.models import Registration

from .conftest import questions_workshop, run

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workshop():
    return questions_workshop()


def test_fastmcp_negotiates_the_2026_era_and_reads_the_questions(mcp_url, workshop):
    async def read():
        async with Client(mcp_url) as client:
            result = await client.call_tool("get_event_details", {"event_id": workshop.public_id})
            return client.protocol_version, result

    version, result = run(read())
    assert version == "2026-07-28"
    body = result.structured_content
    assert [q["identifier"] for q in body["questions"]] == ["diet", "diet_other", "photos"]
    schema = body["answersSchema"]
    assert schema["properties"]["diet"]["enum"] == ["none", "other"]
    assert {"diet", "photos"} <= set(schema["required"])


def test_missing_answers_are_asked_through_fastmcps_form_handler(mcp_url, user, token_for, workshop):
    token = token_for(user)
    asked: list[tuple[str, Any, dict]] = []

    async def person(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        """The person at fastmcp's form: what the first round asks, then what "other" reveals."""
        asked.append((message, response_type, params.requested_schema))
        if "diet" in params.requested_schema["properties"]:
            return ElicitResult(action="accept", content={"diet": "other", "photos": True, "confirm": True})
        return ElicitResult(action="accept", content={"diet_other": "no nuts", "confirm": True})

    async def call():
        async with Client(mcp_url, auth=token, elicitation_handler=person) as client:
            return await client.call_tool(
                "register_event", {"event_id": workshop.public_id}, raise_on_error=False
            )

    result = run(call())
    assert result.is_error is False, result.structured_content
    (first_message, first_type, first), (_, _, second) = asked
    assert "Questions workshop" in first_message
    assert first_type is not None  # fastmcp made a type of the form to answer with
    assert set(first["required"]) == {"diet", "photos", "confirm"}
    assert set(second["properties"]) == {"diet_other", "confirm"}
    assert result.structured_content["registration"]["status"] == "confirmed"
    registration = Registration.objects.get(user=user)
    assert registration.status == RegistrationStatus.CONFIRMED
    assert {key: entry["value"] for key, entry in registration.answers.items()} == {
        "diet": "other",
        "diet_other": "no nuts",
        "photos": True,
    }


def test_a_person_who_declines_fastmcps_form_is_not_registered(mcp_url, user, token_for, workshop):
    token = token_for(user)

    async def decline(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        return ElicitResult(action="decline")

    async def call():
        async with Client(mcp_url, auth=token, elicitation_handler=decline) as client:
            return await client.call_tool(
                "register_event", {"event_id": workshop.public_id}, raise_on_error=False
            )

    result = run(call())
    assert result.is_error is True
    assert result.structured_content["code"] == "USER_CANCELLED"
    assert not Registration.objects.exists()


def test_pinned_to_the_2025_handshake_fastmcp_gets_the_list_of_what_is_missing(
    mcp_url, user, token_for, workshop
):
    """Form elicitation is asked through 2026-07-28's input-required results only: a fastmcp client
    pinned to the `initialize` handshake is never asked, and its agent gets the missing answers listed."""
    token = token_for(user)
    asked: list = []

    async def person(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content={"diet": "none", "photos": True, "confirm": True})

    async def call():
        async with Client(mcp_url, auth=token, elicitation_handler=person, mode="legacy") as client:
            result = await client.call_tool(
                "register_event", {"event_id": workshop.public_id}, raise_on_error=False
            )
            return client.protocol_version, result

    version, result = run(call())
    assert version == "2025-11-25"
    assert asked == []
    body = result.structured_content
    assert result.is_error is True
    assert (body["code"], body["reason"]) == ("INVALID_INPUT", "ANSWERS_INVALID")
    assert set(body["fields"]) == {"answers.diet", "answers.photos"}
    assert not Registration.objects.exists()
