"""The MCP Inspector's CLI, an outside judge, against `/mcp` (E2): the tools it lists, calls of the
read tools, anonymously and with a personal access token in an `Authorization` header, and writes as a
script drives them with the Inspector (it declares no elicitation), so through the preview and its
signed `confirmation`: `register_event` with a ticket type and the answers to the event's questions,
and a manager's `confirm_payment`.

`inspector --cli <url> --transport http --method …` prints the JSON result and exits 0; 5 means the
tool answered `isError` (the preview of a write that waits for the person's agreement is one).
`--strict` on tools/list also judges how portable the tool schemas are (exit 6 on an error-severity
problem; warnings are printed only). The Inspector keeps a catalogue and OAuth
state under $HOME, so it runs with a HOME of its own. Evidence levels (E1–E4): docs/evidence.md.
"""

from __future__ import annotations

import json

import pytest

from accounts.models import AccessToken
from core.visitors import Mode, Visitor
from events import actions
from events.choices import PaymentStatus, RegistrationStatus, StaffRole
from events.models import EventStaff, Registration
from tests.factories import EventFactory, QuestionFactory, UserFactory, paid_event

from .judges import INSPECTOR_CLI, run_node

pytestmark = [pytest.mark.judges, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def inspector(mcp_url, tmp_path):
    """Run `inspector --cli <our /mcp> --transport http <args>`; its parsed JSON output."""
    home = tmp_path / "home"
    home.mkdir()

    def run(*args: str, exit_code: int = 0) -> dict:
        finished = run_node(
            INSPECTOR_CLI,
            "--cli",
            mcp_url,
            "--transport",
            "http",
            *args,
            cwd=tmp_path,
            timeout=120,
            env={"HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json")},
        )
        assert finished.returncode == exit_code, (
            f"exit {finished.returncode}\n{finished.stdout[-3000:]}\n{finished.stderr}"
        )
        return json.loads(finished.stdout)

    return run


def test_tools_list_has_our_tools_with_portable_schemas(inspector, mcp_tool_names):
    listed = inspector("--method", "tools/list", "--strict")
    # All of them, in the registry's order (by name).
    assert [tool["name"] for tool in listed["tools"]] == sorted(mcp_tool_names)
    assert all(tool["inputSchema"]["type"] == "object" for tool in listed["tools"])


def test_search_events_anonymously(inspector):
    EventFactory(public_id="evt-inspector", title="WebMCP with the Inspector")
    result = inspector("--method", "tools/call", "--tool-name", "search_events", "--tool-arg", "query=WebMCP")
    assert result["isError"] is False
    assert result["structuredContent"]["ok"] is True
    assert [event["id"] for event in result["structuredContent"]["events"]] == ["evt-inspector"]
    assert '"ok": true' in result["content"][0]["text"]


def test_get_event_details_with_a_bearer_token(inspector, token_for):
    EventFactory(public_id="evt-inspector", title="WebMCP with the Inspector")
    user = UserFactory(username="inspector")
    token = token_for(user, ["events:read"])
    result = inspector(
        "--method",
        "tools/call",
        "--tool-name",
        "get_event_details",
        "--tool-arg",
        "event_id=evt-inspector",
        "--header",
        f"Authorization: Bearer {token}",
    )
    assert result["isError"] is False
    body = result["structuredContent"]
    assert body["ok"] is True
    assert (body["event"]["id"], body["event"]["title"]) == ("evt-inspector", "WebMCP with the Inspector")
    assert AccessToken.objects.get(user=user).last_used_at is not None  # the header reached the server


def call_confirmed(inspector, token: str, tool: str, *arguments: str) -> dict:
    """`tool` called as a script calls a write with the Inspector: the preview (isError, exit 5) with
    its `confirmation`, then the same call with it. The second call's result."""
    args = ["--method", "tools/call", "--tool-name", tool, "--header", f"Authorization: Bearer {token}"]
    for argument in arguments:
        args += ["--tool-arg", argument]
    preview = inspector(*args, exit_code=5)
    body = preview["structuredContent"]
    assert (body["code"], body["reason"]) == ("CONFIRMATION_REQUIRED", "PERSON_MUST_CONFIRM"), body
    assert body["preview"] and body["confirmation"]
    return inspector(*args, "--tool-arg", f"confirmation={body['confirmation']}")


def test_register_event_with_a_ticket_type_and_answers(inspector, token_for):
    event = paid_event(
        public_id="evt-inspector-paid", title="Paid with questions", prices={"early": 600, "regular": 1200}
    )
    QuestionFactory(event=event, identifier="company", required=True, label_en="Company")
    user = UserFactory(username="inspector")
    token = token_for(user, ["registrations:write"])

    result = call_confirmed(
        inspector,
        token,
        "register_event",
        "event_id=evt-inspector-paid",
        "ticket_type=early",
        'answers={"company": "Inspector Ltd"}',
    )
    assert result["isError"] is False, result
    body = result["structuredContent"]
    assert body["registration"]["status"] == "pending_payment"
    assert body["registration"]["payment"]["amount"] == 600
    registration = Registration.objects.get(user=user)
    assert (registration.status, registration.ticket_type) == (RegistrationStatus.PENDING_PAYMENT, "early")
    assert registration.answers["company"]["value"] == "Inspector Ltd"


def test_confirm_payment_by_a_managers_token(inspector, token_for):
    event = paid_event(public_id="evt-inspector-paid", title="Paid workshop")
    payer = UserFactory(username="payer")
    actions.call("register_event", visitor=Visitor(user=payer), channel=Mode.API, event_id=event.public_id)
    registration = Registration.objects.get(user=payer)
    manager = UserFactory(username="manager")
    EventStaff.objects.create(event=event, user=manager, role=StaffRole.MANAGER)
    token = token_for(manager, ["payments:write"])

    listed = inspector("--method", "tools/list", "--header", f"Authorization: Bearer {token}")
    assert "confirm_payment" in [tool["name"] for tool in listed["tools"]]
    result = call_confirmed(
        inspector,
        token,
        "confirm_payment",
        f"event_id={event.public_id}",
        f"attendee_id={registration.pk}",
    )
    assert result["isError"] is False, result
    body = result["structuredContent"]
    assert body["status"] == "confirmed" and body["payment"]["status"] == "paid"
    registration.refresh_from_db()
    assert (registration.status, registration.payment_status) == (
        RegistrationStatus.CONFIRMED,
        PaymentStatus.PAID,
    )
