"""Registration questions over `/mcp` with the SDK's client: `get_event_details` gives the questions
and the answers' schema; `register_event` without the required answers asks the person (a client with
form elicitation: the questions as a flat form in their language, with the confirmation, and a second
round for what an answer reveals), or lists what is missing (a client without)."""

from __future__ import annotations

import httpx2
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from events.choices import RegistrationStatus
from events.models import Registration

from .conftest import connect, questions_workshop, run

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def workshop():
    return questions_workshop()


def test_get_event_details_gives_the_questions_and_the_answers_schema(mcp_url, workshop):
    async def read():
        async with connect(mcp_url, mode="2026-07-28") as client:
            return await client.call_tool("get_event_details", {"event_id": workshop.public_id})

    body = run(read()).structured_content
    assert [q["identifier"] for q in body["questions"]] == ["diet", "diet_other", "photos"]
    assert body["answersSchema"]["properties"]["diet"]["enum"] == ["none", "other"]


def test_register_with_the_answers_in_the_call(mcp_url, user, token_for, workshop):
    token = token_for(user)

    async def yes(context, params):
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=yes) as client:
            answers = {"diet": "none", "photos": True}
            return await client.call_tool(
                "register_event", {"event_id": workshop.public_id, "answers": answers}
            )

    result = run(call())
    assert result.is_error is False, result.structured_content
    assert Registration.objects.get(user=user).answers["diet"]["value"] == "none"


def test_missing_answers_are_asked_of_the_person_then_what_they_reveal(mcp_url, user, token_for, workshop):
    token = token_for(user)
    asked: list = []

    async def person(context, params):
        asked.append(params)
        properties = params.requested_schema["properties"]
        if "diet" in properties:
            return types.ElicitResult(
                action="accept", content={"diet": "other", "photos": True, "confirm": True}
            )
        return types.ElicitResult(action="accept", content={"diet_other": "no nuts", "confirm": True})

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=person) as client:
            return await client.call_tool("register_event", {"event_id": workshop.public_id})

    result = run(call())
    assert result.is_error is False, result.structured_content
    first, second = asked
    diet = first.requested_schema["properties"]["diet"]
    assert diet["title"] == "飲食"  # no Accept-Language: the site's language
    assert diet["oneOf"] == [{"const": "none", "title": "none"}, {"const": "other", "title": "other"}]
    assert set(first.requested_schema["required"]) == {"diet", "photos", "confirm"}
    assert set(second.requested_schema["properties"]) == {"diet_other", "confirm"}
    registration = Registration.objects.get(user=user)
    assert registration.status == RegistrationStatus.CONFIRMED
    assert {key: entry["value"] for key, entry in registration.answers.items()} == {
        "diet": "other",
        "diet_other": "no nuts",
        "photos": True,
    }


def test_the_form_is_in_the_persons_language(mcp_url, user, token_for, workshop):
    token = token_for(user)
    asked: list = []

    async def decline(context, params):
        asked.append(params)
        return types.ElicitResult(action="decline")

    async def in_english():
        headers = {"Authorization": f"Bearer {token}", "Accept-Language": "en"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(mcp_url, http_client=http)
            async with Client(transport, mode="2026-07-28", elicitation_callback=decline) as client:
                return await client.call_tool("register_event", {"event_id": workshop.public_id})

    result = run(in_english())
    assert result.is_error is True and result.structured_content["code"] == "USER_CANCELLED"
    assert asked[0].requested_schema["properties"]["diet"]["title"] == "Diet"
    assert "please answer the organisers' questions" in asked[0].message
    assert not Registration.objects.exists()


def test_without_elicitation_the_error_lists_what_is_missing(mcp_url, user, token_for, workshop):
    token = token_for(user)

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28") as client:
            return await client.call_tool("register_event", {"event_id": workshop.public_id})

    result = run(call())
    body = result.structured_content
    assert result.is_error is True
    assert (body["code"], body["reason"]) == ("INVALID_INPUT", "ANSWERS_INVALID")
    assert set(body["fields"]) == {"answers.diet", "answers.photos"}
    assert not Registration.objects.exists()


def test_a_form_answered_with_nothing_is_the_list_of_what_is_missing_not_another_round(
    mcp_url, user, token_for, workshop
):
    token = token_for(user)
    asked: list = []

    async def only_yes(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def call():
        async with connect(mcp_url, token=token, mode="2026-07-28", elicitation=only_yes) as client:
            return await client.call_tool("register_event", {"event_id": workshop.public_id})

    result = run(call())
    assert len(asked) == 1
    assert result.is_error is True and result.structured_content["reason"] == "ANSWERS_INVALID"
    assert not Registration.objects.exists()
