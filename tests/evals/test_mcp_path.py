"""`--via mcp` without a server: which cases apply and who plays them, the grader's page-only keys, the
stub's event id, the page text a model is shown. The runs themselves are in test_runs.py."""

from __future__ import annotations

from types import SimpleNamespace

import mcp.types as types
import pytest
from django_webmcp.mcp import mcp_tools

from evals.bank import Case, load_bank
from evals.grading import grade, over_mcp
from evals.matcher import Call
from evals.mcp_client import McpCasePage, page_text, route_event_id
from evals.model import strip_combinators, tool_specs
from evals.runner import mcp_account_reason, mcp_not_applicable
from evals.stub_model import with_page_event

pytestmark = pytest.mark.unit

READ_ONLY = {"search_events", "get_event_details"}


@pytest.fixture(scope="module")
def bank() -> dict[str, Case]:
    return {case.name: case for case in load_bank()}


def starting(bank: dict[str, Case], prefix: str) -> Case:
    return next(case for name, case in bank.items() if name.startswith(prefix))


def test_the_blocked_api_and_answer_on_the_page_cases_are_not_applicable_over_mcp(bank, mcp_tool_names):
    """blockApi aborts the browser's requests; answerOnPage asks what the page's text says, and an MCP
    client has no page (its prompt carries none of the text)."""
    tools = set(mcp_tool_names)
    skipped = {name for name, case in bank.items() if mcp_not_applicable(case, tools)}
    blocked = {name for name, case in bank.items() if case.meta.setup.get("blockApi")}
    on_page = {name for name, case in bank.items() if case.meta.answerOnPage}
    assert skipped == blocked | on_page
    assert len(blocked) == 2 and all(name.startswith("RECOVERY") for name in blocked)
    assert len(on_page) == 2 and all(name.startswith("NO-03") for name in on_page)
    reason = mcp_not_applicable(starting(bank, "NO-03 en"), tools)
    assert (
        reason == "not applicable over MCP: the answer is in the page's text, and an MCP client has no page"
    )
    # A tool /mcp does not list makes a case not applicable too.
    reason = mcp_not_applicable(starting(bank, "WRITE-05 en"), tools - {"join_waitlist"})
    assert reason == "not applicable over MCP: /mcp does not list join_waitlist"


def test_signed_in_and_writing_cases_get_an_account_and_the_auth_cases_stay_anonymous(bank):
    reasons = {name: mcp_account_reason(case, READ_ONLY) for name, case in bank.items()}
    with_account = {name[:8] for name, reason in reasons.items() if reason}
    assert with_account == {"WRITE-01", "WRITE-02", "WRITE-03", "WRITE-04", "WRITE-05", "WRITE-06"} | {
        "WRITE-07",
        "ORD-03 e",
        "ORD-04 e",  # the door: a staff member's account
        "ORD-04 z",
        "ARG-08 e",  # the registration questions' cases: a signed-in person
        "ARG-08 z",
        "ARG-09 e",
        "ARG-09 z",
        "WRITE-08",
        "ARG-10 e",  # the paid registration's cases: a signed-in person
        "ARG-10 z",
        "WRITE-09",
    }
    assert reasons[starting(bank, "WRITE-03").name] == "signedIn"
    assert reasons[starting(bank, "WRITE-01").name].startswith("the case writes (save_event)")
    assert not any(reason for name, reason in reasons.items() if name.startswith(("AUTH", "NAV", "NO-")))


def test_over_mcp_the_grader_ignores_ui_updated_and_nothing_else(bank):
    case = starting(bank, "WRITE-01")
    answer = {"ok": True, "eventId": "evt-ai-agent-101-taipei", "alreadySaved": False, "uiUpdated": False}
    calls = [Call("save_event", {"event_id": "evt-ai-agent-101-taipei"}, answer)]
    assert grade(case, calls).outcome == "fail"  # the page must have updated
    graded = grade(case, calls, via="mcp")
    assert graded.outcome == "pass" and graded.as_dict()["ignoredOverMcp"] == ["uiUpdated"]
    refused = [Call("save_event", {"event_id": "evt-ai-agent-101-taipei"}, {**answer, "alreadySaved": True})]
    assert grade(case, refused, via="mcp").outcome == "fail"
    assert "ignoredOverMcp" not in grade(starting(bank, "NAV-01"), [], via="mcp").as_dict()


def test_over_mcp_earlier_turns_answers_lose_ui_updated_too():
    case = Case.from_dict(
        {
            "name": "x",
            "messages": [
                {"role": "user", "type": "message", "content": "save it"},
                {"role": "model", "type": "functioncall", "name": "save_event", "arguments": {}},
                {
                    "role": "user",
                    "type": "functionresponse",
                    "name": "save_event",
                    "response": {"result": {"ok": True, "uiUpdated": True}},
                },
                {"role": "user", "type": "message", "content": "thanks"},
            ],
            "expectedCall": None,
            "meta": {"route": "/events/evt-a/", "tags": ["NO", "en"]},
        }
    )
    stripped, ignored = over_mcp(case)
    assert ignored == ["uiUpdated"] and stripped.history()[0]["response"] == {"ok": True}
    replayed = [Call("save_event", {"event_id": "evt-a"}, {"ok": True, "uiUpdated": False})]
    assert grade(case, [], replayed).outcome == "fail"
    assert grade(case, [], replayed, via="mcp").outcome == "pass"


def test_the_stub_gives_the_pages_event_id_only_where_the_tool_requires_it():
    over_mcp_tool = [
        {"type": "function", "function": {"name": "save_event", "parameters": {"required": ["event_id"]}}}
    ]
    on_the_page = [{"type": "function", "function": {"name": "save_event", "parameters": {}}}]
    page = "/events/evt-webmcp-intro/"
    assert with_page_event("save_event", {}, over_mcp_tool, page) == {"event_id": "evt-webmcp-intro"}
    assert with_page_event("save_event", {}, on_the_page, page) == {}
    assert with_page_event("save_event", {"event_id": "evt-b"}, over_mcp_tool, page) == {"event_id": "evt-b"}
    assert with_page_event("save_event", {}, over_mcp_tool, "/events/") == {}


def test_route_event_and_page_text():
    assert route_event_id("/events/evt-webmcp-intro/") == "evt-webmcp-intro"
    assert route_event_id("/events/?location=kaohsiung") is None
    html = """<html><head><title>WebMCP 入門 · Site</title><script>var x = 1;</script></head><body>
    <nav>Menu</nav><main><h1>WebMCP 入門</h1><p>Starts <time>10:00</time> in
    Taipei.</p><div hidden>secret</div><ul><li>Free</li><li>Beginner</li></ul></main></body></html>"""
    title, text = page_text(html)
    assert title == "WebMCP 入門 · Site"
    assert text.splitlines() == ["WebMCP 入門", "Starts 10:00 in Taipei.", "Free", "Beginner"]


def test_the_model_is_offered_the_input_schemas_only_not_the_output_schemas():
    """`tools/list` carries each tool's outputSchema (clients validate results with it); the small
    local model's prompt must not grow with it: the runner offers name, description and inputSchema."""
    listed = types.ListToolsResult(tools=mcp_tools())
    assert all(tool.output_schema for tool in listed.tools)

    async def list_tools() -> types.ListToolsResult:
        return listed

    def run(coroutine, timeout):
        coroutine.close()
        return listed

    page = object.__new__(McpCasePage)
    page._tools = None
    page.connection = SimpleNamespace(client=SimpleNamespace(list_tools=list_tools), run=run)
    offered = page.tools()
    assert all("outputSchema" not in tool for tool in offered)
    specs = tool_specs([*offered, {**offered[0], "outputSchema": listed.tools[0].output_schema}])
    for spec, tool in zip(specs, [*listed.tools, listed.tools[0]], strict=True):
        assert set(spec["function"]) == {"name", "description", "parameters"}
        assert spec["function"]["parameters"] == strip_combinators(tool.input_schema)
